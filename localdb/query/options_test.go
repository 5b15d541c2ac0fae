package query_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/query"
)

// TestAllowFallback: with "allow_fallback": false, a use_index that cannot
// serve the query is CouchDB's 400 invalid_index rather than a warning and
// another index; so is a sort no index serves without use_index.
func TestAllowFallback(t *testing.T) {
	db := orders(t)
	createIndex(t, db, `{"index": {"fields": ["when"]}, "ddoc": "o", "name": "when"}`)
	_, err := query.Find(bg, db, []byte(`{"selector": {"total": 99}, "use_index": "o/when", "allow_fallback": false}`))
	wantCouchError(t, err, 400, "invalid_index")
	if ce := (*couchdoc.Error)(nil); errorsAs(err, &ce) && ce.Reason != "_design/o, when specified by `use_index` could not be found or it is not suitable." {
		t.Fatalf("reason %q", ce.Reason)
	}
	// Without use_index CouchDB 3.5 wants more than one usable index,
	// _all_docs counted: so even an _id lookup is refused with only
	// _all_docs, and a sort one json index serves (then _all_docs cannot).
	for _, q := range []string{
		`{"selector": {"total": 99}, "sort": ["total"], "allow_fallback": false}`,
		`{"selector": {"_id": "o01"}, "allow_fallback": false}`,
		`{"selector": {"when": {"$gt": 3}}, "sort": ["when"], "allow_fallback": false}`,
	} {
		_, err = query.Find(bg, db, []byte(q))
		wantCouchError(t, err, 400, "invalid_index")
	}
	if got := ids(t, find(t, db, `{"selector": {"when": 3}, "allow_fallback": false}`)); !reflect.DeepEqual(got, []string{"o03"}) {
		t.Fatalf("json index and _all_docs usable: %v", got)
	}
	// Named and usable: no fallback needed.
	if got := ids(t, find(t, db, `{"selector": {"when": 3}, "use_index": "o/when", "allow_fallback": false}`)); !reflect.DeepEqual(got, []string{"o03"}) {
		t.Fatalf("named: %v", got)
	}
	// The default falls back with a warning.
	if res := find(t, db, `{"selector": {"total": 99}, "use_index": "o/when"}`); len(res.Docs) != 1 || res.Warning == "" {
		t.Fatalf("fallback: %d docs, %q", len(res.Docs), res.Warning)
	}
	_, err = query.Find(bg, db, []byte(`{"selector": {}, "allow_fallback": 1}`))
	wantCouchError(t, err, 400, "invalid_boolean")
}

// TestFindConflicts: "conflicts": true gives each returned document with
// conflicts its _conflicts, in the whole document and when fields lists it.
func TestFindConflicts(t *testing.T) {
	db := orders(t)
	loser := &couchdoc.Doc{ID: "o01", Rev: "1-00000000000000000000000000000001", Body: []byte(`{"customer": "c9"}`),
		Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"00000000000000000000000000000001"}}}
	if _, err := db.BulkDocs(bg, []*couchdoc.Doc{loser}, false); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	res := find(t, db, `{"selector": {"_id": "o01"}, "conflicts": true}`)
	if err := json.Unmarshal(res.Docs[0], &doc); err != nil || !reflect.DeepEqual(doc["_conflicts"], []any{loser.Rev}) {
		t.Fatalf("whole doc: %s", res.Docs[0])
	}
	res = find(t, db, `{"selector": {"_id": {"$in": ["o01", "o02"]}}, "conflicts": true, "fields": ["_id", "_conflicts"]}`)
	if len(res.Docs) != 2 || string(res.Docs[0]) != `{"_conflicts":["`+loser.Rev+`"],"_id":"o01"}` || string(res.Docs[1]) != `{"_id":"o02"}` {
		t.Fatalf("fields: %s", res.Docs)
	}
	res = find(t, db, `{"selector": {"_id": "o01"}}`)
	var plain map[string]any
	if json.Unmarshal(res.Docs[0], &plain); plain["_conflicts"] != nil || plain["_id"] != "o01" {
		t.Fatalf("without conflicts: %s", res.Docs[0])
	}
}
