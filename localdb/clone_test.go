package localdb_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func openPath(t *testing.T, path string) *localdb.DB {
	t.Helper()
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.CheckInvariants(bg); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		db.Close()
	})
	return db
}

func TestCloneKeepsDataNewIdentity(t *testing.T) {
	src := open(t)
	r := put(t, src, "a", "", `{"v":1}`)
	put(t, src, "a", r, `{"v":2}`)
	if _, err := src.PutLocal(bg, &couchdoc.Doc{ID: "_local/ckpt", Body: []byte(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	one := filepath.Join(dir, "one.db")
	if err := localdb.Clone(bg, src.Path(), one); err != nil {
		t.Fatal(err)
	}
	// The source stays open and writable while it is cloned.
	put(t, src, "b", "", `{}`)
	c := openPath(t, one)
	if c.UUID() == src.UUID() || !reflect.DeepEqual(c.Seeds(), []string{src.UUID()}) {
		t.Fatalf("clone uuid %s seeds %v, source %s", c.UUID(), c.Seeds(), src.UUID())
	}
	if src.Seeds() != nil {
		t.Errorf("source has seeds %v", src.Seeds())
	}
	ci, _ := c.Info(bg)
	if ci.DocCount != 1 || ci.UpdateSeq != 2 {
		t.Errorf("clone info %+v, want the snapshot: 1 doc at seq 2", ci)
	}
	if d, err := c.Get(bg, "a", localdb.GetOptions{}); err != nil || d.Rev[:2] != "2-" {
		t.Errorf("clone's a: %v %v", d, err)
	}
	if _, err := c.GetLocal(bg, "_local/ckpt"); err != nil {
		t.Errorf("clone lost a _local doc: %v", err)
	}
	// A clone of the clone records both seeds, the nearest first, and a
	// UUID of its own.
	two := filepath.Join(dir, "two.db")
	if err := localdb.Clone(bg, one, two); err != nil {
		t.Fatal(err)
	}
	c2 := openPath(t, two)
	if c2.UUID() == c.UUID() || !reflect.DeepEqual(c2.Seeds(), []string{c.UUID(), src.UUID()}) {
		t.Errorf("clone of clone: uuid %s seeds %v", c2.UUID(), c2.Seeds())
	}
}

func TestCloneRefusals(t *testing.T) {
	src := open(t)
	dir := t.TempDir()
	wantErr(t, localdb.Clone(bg, filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db")), couchdoc.ErrNotFound)
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a missing source was created")
	}
	exists := filepath.Join(dir, "exists.db")
	if err := os.WriteFile(exists, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantErr(t, localdb.Clone(bg, src.Path(), exists), couchdoc.ErrFileExists)
	if b, _ := os.ReadFile(exists); string(b) != "mine" {
		t.Error("an existing destination was overwritten")
	}
	notStore := filepath.Join(dir, "plain.db")
	os.WriteFile(notStore, nil, 0o600)
	if err := localdb.Clone(bg, notStore, filepath.Join(dir, "y.db")); err == nil {
		t.Error("cloned a file that is not a store")
	}
	if _, err := os.Stat(filepath.Join(dir, "y.db")); err == nil {
		t.Error("a failed clone left its destination")
	}
}
