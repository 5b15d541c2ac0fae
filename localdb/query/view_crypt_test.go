package query_test

import (
	"bytes"
	"crypto/rand"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/settee/settee/localdb"
)

// TestViewFilesEncrypted: an encrypted store's view files are encrypted
// with its key: no file under the store's folder holds what the view
// emitted, and the view still answers after the store is reopened.
func TestViewFilesEncrypted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "enc.db")
	key := make([]byte, localdb.KeySize)
	rand.Read(key)
	db, err := localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "_design/d", `{"views":{"v":{"map":"function (doc) { emit('VIEWMARK' + doc.n, 'VALMARK'); }"}}}`)
	for _, id := range []string{"a", "b", "c"} {
		put(t, db, id, `{"n":"`+id+`"}`)
	}
	query1 := func(db *localdb.DB) string {
		res, err := queryView(t, db, "d", "v", "")
		if err != nil {
			t.Fatal(err)
		}
		return viewJSON(t, res)
	}
	want := query1(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"VIEWMARK", "VALMARK", "SQLite format 3"} {
			if bytes.Contains(b, []byte(m)) {
				t.Errorf("%s holds %q", p, m)
			}
		}
		return nil
	})
	if n < 2 {
		t.Fatalf("%d files: no view file was written", n)
	}
	db, err = localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := query1(db); got != want {
		t.Fatalf("after reopening: %s, want %s", got, want)
	}
}
