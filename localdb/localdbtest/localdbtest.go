// Package localdbtest opens throw-away stores for tests and checks their
// invariants when the test ends.
package localdbtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/settee/settee/localdb"
)

// Encrypted reports whether the tests run on encrypted stores
// (SETTEE_TEST_ENCRYPT=1, a second pass of scripts/test).
func Encrypted() bool { return os.Getenv("SETTEE_TEST_ENCRYPT") == "1" }

// Key is the key of the suite's encrypted stores: nil unless Encrypted.
// It is the same in every process, so a test's child processes open the
// stores it made.
func Key() []byte {
	if !Encrypted() {
		return nil
	}
	k := sha256.Sum256([]byte("settee test key"))
	return k[:]
}

// Options returns opts (or new options) with Key set when the tests run
// on encrypted stores and opts gives no key.
func Options(opts *localdb.Options) *localdb.Options {
	if !Encrypted() || (opts != nil && opts.Key != nil) {
		return opts
	}
	o := localdb.Options{}
	if opts != nil {
		o = *opts
	}
	o.Key = Key()
	return &o
}

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
	db, err := localdb.Open(filepath.Join(t.TempDir(), name+".db"), Options(opts))
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

// SQLFile makes a new store file in t.TempDir() with localdb.Open (the
// store's schema, every migration applied), closes the store and returns
// the file opened with database/sql, for tests of the internal packages
// that work on its tables through a transaction. Its connections have
// foreign keys on and begin write transactions IMMEDIATE, as the store's
// writer does; it is closed on cleanup.
func SQLFile(t testing.TB) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatalf("localdbtest: open %s: %v", path, err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("localdbtest: close %s: %v", path, err)
	}
	raw, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		t.Fatalf("localdbtest: open %s with database/sql: %v", path, err)
	}
	t.Cleanup(func() {
		if err := raw.Close(); err != nil {
			t.Errorf("localdbtest: close %s: %v", path, err)
		}
	})
	return raw
}

// Count runs a query of one integer (a COUNT) on db and returns it,
// failing the test on an error.
func Count(t testing.TB, db *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
