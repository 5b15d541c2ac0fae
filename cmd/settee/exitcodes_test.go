package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/internal/testpeer"
)

// TestExitCodesOfBinary drives the binary through one failure of each class and
// checks the exit code says what fixes it: new arguments (2), a store or
// database that exists (5), credentials (4), the current revision (6), a
// retry (3), or none of these (1: local I/O errors, an answer that is not
// CouchDB's).
func TestExitCodesOfBinary(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "phone.db")
	ok(t, "put", store, "shopping", `{"milk":1}`)
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(plain, []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	open := serveBinary(t, filepath.Join(dir, "open"), nil)
	ok(t, "push", store, open+"/shop", "--create-target")
	locked := serveBinary(t, filepath.Join(dir, "locked"), []string{"SETTEE_PASSWORD=right"}, "--user", "admin")
	closed := fmt.Sprintf("http://127.0.0.1:%d/shop", testpeer.FreePort(t))
	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		code  int
		parts []string
	}{
		{"malformed JSON", nil, []string{"put", store, "doc1", `{"a":`}, exitUsage, nil},
		{"missing store", nil, []string{"get", filepath.Join(dir, "none.db"), "x"}, exitNotFound, []string{"no local store"}},
		{"missing database", nil, []string{"pull", filepath.Join(dir, "new.db"), open + "/nope"}, exitNotFound, []string{"not found"}},
		{"wrong password", []string{"SETTEE_PASSWORD=wrong"}, []string{"pull", filepath.Join(dir, "new.db"), "--user", "admin", locked + "/shop"}, exitAuth, []string{"unauthorized"}},
		{"stale revision", nil, []string{"put", store, "shopping", `{"milk":2}`}, exitConflict, []string{"conflict"}},
		{"unreachable", nil, []string{"pull", filepath.Join(dir, "new.db"), "--retries", "0", closed}, exitTransient, []string{"cannot reach", "connection refused"}},
		{"a directory for a file", nil, []string{"attachment", "put", store, "shopping", "d", filepath.Join(dir, "adir"), "--update"}, exitFailure, []string{"is a directory"}},
		{"a file for a directory", nil, []string{"demo", "--keep", plain}, exitFailure, []string{"not a directory"}},
		{"not a database", nil, []string{"pull", filepath.Join(dir, "new.db"), open + "/_all_dbs"}, exitFailure, []string{"not a CouchDB database"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.env, c.args...)
			failsWith(t, r, c.code, c.parts...)
			for _, leak := range []string{"Go value", "sync.", "couch.", "*"} {
				if strings.Contains(r.stderr, leak) {
					t.Errorf("stderr %q shows Go's %q", r.stderr, leak)
				}
			}
			if n := strings.Count(r.stderr, "127.0.0.1:"); n > 1 {
				t.Errorf("stderr %q names the URL %d times", r.stderr, n)
			}
		})
	}
}
