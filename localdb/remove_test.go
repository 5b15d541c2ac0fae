package localdb_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/settee/settee/localdb"
)

func TestRemoveAndExists(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.db")
	if ok, err := localdb.Exists(bg, path); ok || err != nil {
		t.Fatalf("Exists of a missing store: %v %v", ok, err)
	}
	if err := localdb.Remove(bg, path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove of a missing store: %v", err)
	}
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", "", `{}`)
	if ok, err := localdb.Exists(bg, path); !ok || err != nil {
		t.Fatalf("Exists of an open store: %v %v", ok, err)
	}
	// Open through another spelling of the path: still refused.
	other := filepath.Join(dir, ".", "..", filepath.Base(dir), "app.db")
	if err := localdb.Remove(bg, other); !errors.Is(err, localdb.ErrStoreOpen) {
		t.Fatalf("Remove of an open store: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Side files SQLite or an interrupted Clone may leave.
	for _, s := range []string{"-wal", "-shm", ".clone-tmp"} {
		if err := os.WriteFile(path+s, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(dir, "app.db.mine")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := localdb.Remove(bg, path); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 1 || left[0] != keep {
		t.Fatalf("left after Remove: %v", left)
	}
	if ok, err := localdb.Exists(bg, path); ok || err != nil {
		t.Fatalf("Exists after Remove: %v %v", ok, err)
	}
	// Opened twice, closed once: still open.
	a, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close() // twice: counted once
	if err := localdb.Remove(bg, path); !errors.Is(err, localdb.ErrStoreOpen) {
		t.Fatalf("Remove with one of two handles open: %v", err)
	}
	b.Close()
	if err := localdb.Remove(bg, path); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("not a database at all, but long enough to be read"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	c, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, p := range []string{text, other} {
		if err := localdb.Remove(bg, p); !errors.Is(err, localdb.ErrNotStore) {
			t.Fatalf("Remove %s: %v", p, err)
		}
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is gone: %v", p, err)
		}
		if ok, err := localdb.Exists(bg, p); ok || !errors.Is(err, localdb.ErrNotStore) {
			t.Fatalf("Exists %s: %v %v", p, ok, err)
		}
	}
}
