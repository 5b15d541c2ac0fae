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
	db, err := localdb.Open(filepath.Join(t.TempDir(), "test.db"), opts)
	if err != nil {
		t.Fatalf("localdbtest: open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.CheckInvariants(context.Background()); err != nil {
			t.Errorf("localdbtest: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("localdbtest: close: %v", err)
		}
	})
	return db
}
