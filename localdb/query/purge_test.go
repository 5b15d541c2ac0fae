package query_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// TestPurgeFollowsIndexes: purging a winner moves its document's entry to
// the new winner's key, purging a document whole takes its entries, and
// purging a design document takes its indexes, as in CouchDB, whose
// indexers see a purge like any update.
func TestPurgeFollowsIndexes(t *testing.T) {
	db := localdbTestOpen(t)
	createIndex(t, db, `{"index": {"fields": ["c"]}, "ddoc": "q", "name": "c"}`)
	put := func(id, rev, c string) {
		t.Helper()
		hash := fmt.Sprintf("%032x", len(id)*1000+len(c)+int(rev[0]))
		doc := &couchdoc.Doc{ID: id, Rev: rev + "-" + hash, Body: []byte(`{"c": "` + c + `"}`),
			Revisions: &couchdoc.Revisions{Start: int(rev[0] - '0'), IDs: []string{hash}}}
		if _, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, false); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "2", "win") // the winner: higher generation
	put("a", "1", "lose")
	put("b", "1", "win")
	a, err := db.Get(bg, "a", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Get(bg, "b", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Purge(bg, map[string][]string{"a": {a.Rev}, "b": {b.Rev}}); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[string][]string{"win": {}, "lose": {"a"}} {
		got := ids(t, find(t, db, `{"selector": {"c": "`+c+`"}, "use_index": "q"}`))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("c=%s after purging a's winner: %v, want %v", c, got, want)
		}
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
	ddoc, err := db.Get(bg, "_design/q", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Purge(bg, map[string][]string{"_design/q": {ddoc.Rev}}); err != nil {
		t.Fatal(err)
	}
	if ixs := db.Indexes(); len(ixs) != 0 {
		t.Fatalf("indexes after purging their design doc: %v", ixs)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}
