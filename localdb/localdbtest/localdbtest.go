// Package localdbtest opens throw-away stores for tests and checks their
// invariants when the test ends.
package localdbtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/settee/settee/localdb"
)

// Open opens a new database in t.TempDir(). On cleanup it runs
// CheckInvariants (failing the test if they break) and closes it.
func Open(t testing.TB) *localdb.DB {
	t.Helper()
	return OpenWith(t, nil)
}

// OpenWith is Open with options.
func OpenWith(t testing.TB, opts *localdb.Options) *localdb.DB {
	t.Helper()
	return OpenNamed(t, "test", opts)
}

// OpenNamed is OpenWith for tests that hold several stores: the file is
// name.db and the cleanup's failures name the store.
func OpenNamed(t testing.TB, name string, opts *localdb.Options) *localdb.DB {
	t.Helper()
	db, err := localdb.Open(filepath.Join(t.TempDir(), name+".db"), opts)
	if err != nil {
		t.Fatalf("localdbtest: open %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := db.CheckInvariants(context.Background()); err != nil {
			t.Errorf("localdbtest: store %s: %v", name, err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("localdbtest: close %s: %v", name, err)
		}
	})
	return db
}
