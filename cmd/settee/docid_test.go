package main

import (
	"path/filepath"
	"testing"
)

// An empty document id is refused as CouchDB refuses it (illegal_docid,
// "Document id must not be empty"), whether given as the ID argument or
// as the body's _id, and nothing is written; without any id, one is made.
func TestPutEmptyID(t *testing.T) {
	db := filepath.Join(t.TempDir(), "e.db")
	ok(t, "put", db, "first", `{}`)
	failsWith(t, cli(t, nil, "put", db, "", `{"a":1}`), exitUsage, "illegal_docid", "Document id must not be empty")
	failsWith(t, cli(t, nil, "put", db, `{"_id":"","a":1}`), exitUsage, "illegal_docid", "Document id must not be empty")
	if n := docCount(t, db); n != 1 {
		t.Errorf("%d docs after the refused puts, want 1", n)
	}
	ok(t, "put", db, `{"a":1}`)
	if n := docCount(t, db); n != 2 {
		t.Errorf("%d docs after a put without id, want 2", n)
	}
}
