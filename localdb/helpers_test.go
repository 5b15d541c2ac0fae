package localdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

var bg = context.Background()

func open(t *testing.T) *localdb.DB {
	t.Helper()
	return localdbtest.Open(t)
}

func put(t *testing.T, db *localdb.DB, id, rev, body string) string {
	t.Helper()
	r, err := db.Put(bg, &couchdoc.Doc{ID: id, Rev: rev, Body: json.RawMessage(body)})
	if err != nil {
		t.Fatalf("put %s %s: %v", id, rev, err)
	}
	return r
}

// repl writes one replicated revision with its history (newest first).
func repl(t *testing.T, db *localdb.DB, id string, deleted bool, body string, history ...string) {
	t.Helper()
	doc := replDoc(t, id, deleted, body, history...)
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, false)
	if err != nil {
		t.Fatalf("bulk_docs: %v", err)
	}
	if err := res[0].Err(); err != nil {
		t.Fatalf("bulk_docs %s: %v", id, err)
	}
}

func replDoc(t testing.TB, id string, deleted bool, body string, history ...string) *couchdoc.Doc {
	var revs *couchdoc.Revisions
	for i, h := range history {
		gen, hash, err := couchdoc.ParseRev(h)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			revs = &couchdoc.Revisions{Start: gen}
		}
		revs.IDs = append(revs.IDs, hash)
	}
	return &couchdoc.Doc{ID: id, Rev: history[0], Deleted: deleted, Body: json.RawMessage(body), Revisions: revs}
}

func wantErr(t *testing.T, err error, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

func leaves(t *testing.T, db *localdb.DB, id string) []string {
	t.Helper()
	ors, err := db.OpenRevs(bg, id, nil, localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range ors {
		if o.Doc != nil {
			out = append(out, o.Doc.Rev)
		} else {
			out = append(out, "missing:"+o.Missing)
		}
	}
	return out
}

// updateSeq reads the store's update seq (Info reads the file).
func updateSeq(t *testing.T, db *localdb.DB) int64 {
	t.Helper()
	info, err := db.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	return info.UpdateSeq
}
