package query_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// TestIDRangesCompareBytes: CouchDB compares the top-level _id by raw term
// order (bytes for ids), not by collation, and scans _all_docs over that
// byte range (couchdb35-extra/find#44, #45): '~' sorts after letters,
// 'Z' before 'd'.
func TestIDRangesCompareBytes(t *testing.T) {
	db := localdbtest.Open(t)
	for _, id := range []string{"Zed", "a", "doc-0200", "doc-0201", "doc-0300", "~tilde", "ünï"} {
		put(t, db, id, `{}`)
	}
	res := find(t, db, `{"selector": {"_id": {"$gt": "doc-0200"}}, "execution_stats": true}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"doc-0201", "doc-0300", "~tilde", "ünï"}) ||
		res.Warning != "No matching index found, create an index to optimize query time." || res.Stats.TotalDocsExamined != 4 {
		t.Fatalf("$gt: %v %q %+v", got, res.Warning, res.Stats)
	}
	res = find(t, db, `{"selector": {"_id": {"$gte": "a", "$lte": "doc-0201"}}, "sort": [{"_id": "desc"}]}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"doc-0201", "doc-0200", "a"}) {
		t.Fatalf("desc range: %v", got)
	}
	// Every string is above any number, null or array in raw order.
	if got := ids(t, find(t, db, `{"selector": {"_id": {"$gt": 5, "$lt": "b"}}}`)); !reflect.DeepEqual(got, []string{"Zed", "a"}) {
		t.Fatalf("number bound: %v", got)
	}
	if got := ids(t, find(t, db, `{"selector": {"_id": {"$lt": null}}}`)); len(got) != 0 {
		t.Fatalf("$lt null: %v", got)
	}
	if got := ids(t, find(t, db, `{"selector": {"_id": {"$in": ["a", "Zed", "zed"]}}}`)); !reflect.DeepEqual(got, []string{"Zed", "a"}) {
		t.Fatalf("$in: %v", got)
	}
}

// TestUseIndexStringForms: use_index "ddoc/name" and "_design/ddoc/name"
// name one index, as CouchDB splits them (couchdb35-extra/find#23, #26).
func TestUseIndexStringForms(t *testing.T) {
	db := orders(t)
	createIndex(t, db, `{"index": {"fields": ["when"], "partial_filter_selector": {"open": true}}, "ddoc": "orders", "name": "when"}`)
	for _, ui := range []string{`"orders/when"`, `"_design/orders/when"`, `["_design/orders", "when"]`} {
		res := find(t, db, `{"selector": {"when": {"$lt": 7}, "open": true}, "use_index": `+ui+`, "execution_stats": true}`)
		if got := ids(t, res); !reflect.DeepEqual(got, []string{"o00", "o03", "o06"}) || res.Warning != "" || res.Stats.TotalKeysExamined != 3 {
			t.Fatalf("%s: %v %q %+v", ui, got, res.Warning, res.Stats)
		}
	}
	res := find(t, db, `{"selector": {"total": 99}, "use_index": "orders/when"}`)
	if !strings.HasPrefix(res.Warning, "_design/orders, when was not used because it is not a valid index for this query.\n") {
		t.Fatalf("warning %q", res.Warning)
	}
	_, err := query.Find(bg, db, []byte(`{"selector": {}, "use_index": "a/b/c"}`))
	wantCouchError(t, err, 400, "invalid_index_name")
}
