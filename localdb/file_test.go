package localdb_test

import (
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/localdb"
)

// fileState is the file's bytes and the names beside it, to tell that a
// refused open changed nothing (no -wal, no -shm, same header).
func fileState(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isDir(path) {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	s := string(b)
	for _, e := range entries {
		s += "|" + e.Name()
	}
	return s
}

func rawExec(t testing.TB, path string, stmts ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range stmts {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

func appID(t testing.TB, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var id int
	if err := raw.QueryRow("PRAGMA application_id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestOpenRefuses: paths and files Open must not use, each refused with a
// typed error saying what is wrong once, and left as they were.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "other-app.db")
	rawExec(t, foreign, "CREATE TABLE notes(x)", "INSERT INTO notes VALUES (1)")
	marked := filepath.Join(dir, "marked.db")
	rawExec(t, marked, "PRAGMA application_id = 42")
	text := filepath.Join(dir, "text.db")
	if err := os.WriteFile(text, []byte("hello, this is not SQLite at all, just some text that is long enough"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		opts       *localdb.Options
		want       error
		reason     string
	}{
		{"foreign", foreign, nil, localdb.ErrNotStore, "another program's SQLite database"},
		{"other application_id", marked, nil, localdb.ErrNotStore, "application_id 0x2a"},
		{"not SQLite", text, nil, localdb.ErrNotStore, "is not a SQLite database"},
		{"empty file, no create", empty, &localdb.Options{NoCreate: true}, localdb.ErrNoStore, "is an empty file"},
		{"missing, no create", filepath.Join(dir, "typo.db"), &localdb.Options{NoCreate: true}, localdb.ErrNoStore, "no such file"},
		{"missing directory", filepath.Join(dir, "nope", "x.db"), nil, fs.ErrNotExist, "directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"a directory", dir, nil, localdb.ErrNotStore, "is a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := fileState(t, c.path)
			db, err := localdb.Open(c.path, c.opts)
			if err == nil {
				db.Close()
				t.Fatal("opened")
			}
			var oe *localdb.OpenError
			if !errors.Is(err, c.want) || !errors.As(err, &oe) || oe.Path != c.path {
				t.Fatalf("err %v (%T), want %v", err, err, c.want)
			}
			if msg := err.Error(); !strings.Contains(msg, c.reason) || strings.Count(msg, c.path) != 1 {
				t.Fatalf("message %q, want %q and the path once", msg, c.reason)
			}
			if after := fileState(t, c.path); after != before {
				t.Fatal("the refused path changed")
			}
		})
	}
}

// TestOpenMarksStores: a new store (or an empty file) gets Settee's
// application_id; a store made before the mark opens and is marked.
func TestOpenMarksStores(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "new.db"), empty} {
		db, err := localdb.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
		if id := appID(t, path); id != localdb.ApplicationID {
			t.Fatalf("%s: application_id %#x", path, id)
		}
	}
	legacy := filepath.Join(dir, "new.db")
	rawExec(t, legacy, "PRAGMA application_id = 0")
	db, err := localdb.Open(legacy, &localdb.Options{NoCreate: true})
	if err != nil {
		t.Fatalf("a store made before the mark: %v", err)
	}
	db.Close()
	if id := appID(t, legacy); id != localdb.ApplicationID {
		t.Fatalf("legacy store not marked: %#x", id)
	}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
