package query_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

func TestCreateIndexStoresCouchDBDesignDoc(t *testing.T) {
	db := localdbtest.Open(t)
	res := createIndex(t, db, `{"index": {"fields": [{"type": "desc"}, {"when": "desc"}], "partial_filter_selector": {"open": true}}, "ddoc": "orders", "name": "by-type", "type": "json"}`)
	if *res != (query.CreateResult{Result: "created", ID: "_design/orders", Name: "by-type"}) {
		t.Fatalf("create: %+v", res)
	}
	doc, err := db.Get(bg, "_design/orders", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(doc.Body, &got); err != nil {
		t.Fatal(err)
	}
	var want any
	json.Unmarshal([]byte(`{"language": "query", "views": {"by-type": {
		"map": {"fields": {"type": "desc", "when": "desc"}, "partial_filter_selector": {"open": {"$eq": true}}},
		"reduce": "_count",
		"options": {"def": {"fields": [{"type": "desc"}, {"when": "desc"}], "partial_filter_selector": {"open": true}}}}}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("design doc %s", doc.Body)
	}
	// Column order survives: map.fields is an object, read in order.
	if string(doc.Body) == "" || !json.Valid(doc.Body) {
		t.Fatal("bad body")
	}
	if res := createIndex(t, db, `{"index": {"fields": [{"type": "desc"}, {"when": "desc"}], "partial_filter_selector": {"open": true}}, "ddoc": "_design/orders", "name": "by-type"}`); res.Result != "exists" {
		t.Fatalf("second create: %+v", res)
	}
	// Both directions are CouchDB's unsupported_mixed_sort (mango_sort:validate).
	if _, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": ["type", {"when": "desc"}]}}`)); !errors.Is(err, query.ErrMixedSort) {
		t.Fatalf("mixed directions: %v", err)
	}
	// Default ddoc and name: a hash of the definition, stable.
	a := createIndex(t, db, `{"index": {"fields": ["n"]}}`)
	b := createIndex(t, db, `{"index": {"fields": ["n"]}}`)
	if a.Result != "created" || b.Result != "exists" || a.ID != b.ID || a.ID != "_design/"+a.Name {
		t.Fatalf("generated names: %+v %+v", a, b)
	}
	list := query.ListIndexes(db)
	lj, _ := json.Marshal(list)
	var gotList, wantList any
	json.Unmarshal(lj, &gotList)
	json.Unmarshal([]byte(`{"total_rows": 3, "indexes": [
		{"ddoc": null, "name": "_all_docs", "type": "special", "def": {"fields": [{"_id": "asc"}]}},
		{"ddoc": "`+a.ID+`", "name": "`+a.Name+`", "type": "json", "partitioned": false, "def": {"fields": [{"n": "asc"}]}},
		{"ddoc": "_design/orders", "name": "by-type", "type": "json", "partitioned": false,
		 "def": {"fields": [{"type": "desc"}, {"when": "desc"}], "partial_filter_selector": {"open": {"$eq": true}}}}]}`), &wantList)
	if !reflect.DeepEqual(gotList, wantList) {
		t.Fatalf("list %s", lj)
	}
	if err := query.DeleteIndex(bg, db, "orders", "by-type"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(bg, "_design/orders", localdb.GetOptions{}); !errorsIs(err, couchdoc.ErrNotFound) {
		t.Fatalf("design doc without views still there: %v", err)
	}
	wantCouchError(t, query.DeleteIndex(bg, db, "orders", "by-type"), 404, "not_found")
	if n := len(query.ListIndexes(db).Indexes); n != 2 {
		t.Fatalf("%d indexes after delete", n)
	}
}

func TestCreateIndexRejects(t *testing.T) {
	db := localdbtest.Open(t)
	for _, c := range []struct{ req, name string }{
		{`{}`, "missing_required_key"},
		{`{"index": {}}`, "missing_required_key"}, // CouchDB 3.5's answer
		{`{"index": {"fields": []}}`, "bad_request"},
		{`{"index": {"fields": [{"a": "up"}]}}`, "bad_request"},
		{`{"index": {"fields": ["a"]}, "type": "nope"}`, "invalid_index"},
		{`{"index": {"fields": ["a"]}, "ddoc": 3}`, "invalid_value"},
		{`{"index": {"fields": ["a"], "partial_filter_selector": {"a": {"$bad": 1}}}}`, "bad_request"},
		{`[1]`, "bad_request"},
	} {
		_, err := query.CreateIndex(bg, db, []byte(c.req))
		wantCouchError(t, err, 400, c.name)
	}
	// A text index: CouchDB without its search plugin answers 503.
	_, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": ["a"]}, "type": "text"}`))
	wantCouchError(t, err, 503, "required index service unavailable")
	if n := len(db.Indexes()); n != 0 {
		t.Fatalf("bad requests made %d indexes", n)
	}
	put(t, db, "_design/js", `{"language": "javascript", "views": {"v": {"map": "function(doc){}"}}}`)
	_, err = query.CreateIndex(bg, db, []byte(`{"index": {"fields": ["a"]}, "ddoc": "js"}`))
	wantCouchError(t, err, 400, "bad_request")
}

// TestIndexFollowsWrites checks the index after edits, deletions,
// recreations, conflicts and a design doc arriving by replication; the
// store's cleanup runs CheckInvariants, which verifies every index.
func TestIndexFollowsWrites(t *testing.T) {
	db := localdbtest.Open(t)
	put(t, db, "a", `{"n": 1}`)
	r := put(t, db, "b", `{"n": 2}`)
	put(t, db, "c", `{"m": 3}`)
	createIndex(t, db, `{"index": {"fields": ["n"]}, "ddoc": "d", "name": "n"}`)
	check := func(want ...string) {
		t.Helper()
		if err := db.CheckInvariants(bg); err != nil {
			t.Fatal(err)
		}
		res := find(t, db, `{"selector": {"n": {"$gte": 0}}, "use_index": ["d", "n"], "sort": ["n"]}`)
		if got := ids(t, res); !reflect.DeepEqual(got, want) {
			t.Fatalf("found %v, want %v", got, want)
		}
	}
	check("a", "b")
	r = putRev(t, db, "b", r, `{"n": 0}`)
	check("b", "a")
	r2, err := db.Delete(bg, "b", r)
	if err != nil {
		t.Fatal(err)
	}
	check("a")
	putRev(t, db, "b", "", `{"n": 5}`) // recreate over the tombstone
	_ = r2
	check("a", "b")
	// A replicated conflict that wins replaces the indexed revision.
	_, err = db.BulkDocs(bg, []*couchdoc.Doc{{ID: "a", Rev: "9-aaaa", Body: json.RawMessage(`{"n": 9}`),
		Revisions: &couchdoc.Revisions{Start: 9, IDs: []string{"aaaa"}}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	check("b", "a")
	// A design doc replicated in (new_edits=false) brings its index.
	ddoc := `{"language": "query", "views": {"m-idx": {"map": {"fields": {"m": "asc"}, "partial_filter_selector": {}}, "reduce": "_count", "options": {"def": {"fields": ["m"]}}}}}`
	_, err = db.BulkDocs(bg, []*couchdoc.Doc{{ID: "_design/remote", Rev: "1-abcd", Body: json.RawMessage(ddoc),
		Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"abcd"}}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	res := find(t, db, `{"selector": {"m": 3}, "execution_stats": true}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"c"}) || res.Warning != "" || res.Stats.TotalKeysExamined != 1 {
		t.Fatalf("replicated index: %v %q %+v", got, res.Warning, res.Stats)
	}
}

func putRev(t testing.TB, db *localdb.DB, id, rev, body string) string {
	t.Helper()
	r, err := db.Put(bg, &couchdoc.Doc{ID: id, Rev: rev, Body: json.RawMessage(body)})
	if err != nil {
		t.Fatalf("put %s: %v", id, err)
	}
	return r
}

// TestIndexesSurviveReopen: the registry is read back from the file.
func TestIndexesSurviveReopen(t *testing.T) {
	path := t.TempDir() + "/x.db"
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", `{"n": 1}`)
	createIndex(t, db, `{"index": {"fields": ["n"]}, "ddoc": "d", "name": "n"}`)
	db.Close()
	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put(t, db, "b", `{"n": 2}`)
	res := find(t, db, `{"selector": {"n": {"$gt": 0}}, "sort": ["n"]}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"a", "b"}) || res.Warning != "" {
		t.Fatalf("after reopen: %v %q", got, res.Warning)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRebuildsIndexesOfAnotherEncoding: a file whose entries were
// written with another key encoding (here: lost) gets them rebuilt at Open.
func TestOpenRebuildsIndexesOfAnotherEncoding(t *testing.T) {
	path := t.TempDir() + "/x.db"
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", `{"n": 1}`)
	put(t, db, "b", `{"n": 2}`)
	createIndex(t, db, `{"index": {"fields": ["n"]}, "ddoc": "d", "name": "n"}`)
	db.Close()
	db = rewrite(t, path, "DELETE FROM mango_entries; DELETE FROM mango_indexes; UPDATE meta SET value = '0' WHERE key = 'mango_key_version'")
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
	res := find(t, db, `{"selector": {"n": {"$gt": 0}}, "sort": ["n"]}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"a", "b"}) || res.Warning != "" {
		t.Fatalf("after rebuild: %v %q", got, res.Warning)
	}
}

// TestIndexesAcrossProcesses: two handles on one file (as two processes
// have) see each other's index changes; writes through either keep every
// index.
func TestIndexesAcrossProcesses(t *testing.T) {
	a, b := twoHandles(t)
	put(t, b, "x", `{"n": 1}`) // b has looked at the (empty) index set
	createIndex(t, a, `{"index": {"fields": ["n"]}, "ddoc": "d", "name": "n"}`)
	put(t, b, "y", `{"n": 2}`) // written by b, indexed by a's index
	// (b's check: a's in-memory update seq lags b's write, which the
	// store's invariants would report.)
	if err := b.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
	res := find(t, b, `{"selector": {"n": {"$gt": 0}}, "sort": ["n"]}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"x", "y"}) || res.Warning != "" {
		t.Fatalf("b after a created the index: %v %q", got, res.Warning)
	}
	if err := query.DeleteIndex(bg, a, "d", "n"); err != nil {
		t.Fatal(err)
	}
	put(t, b, "z", `{"n": 3}`)
	res = find(t, b, `{"selector": {"n": {"$gt": 0}}}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"x", "y", "z"}) || res.Warning == "" {
		t.Fatalf("b after a dropped the index: %v %q", got, res.Warning)
	}
	if err := b.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

// TestFindPlansWithAnotherHandlesIndexes: a handle that has not written
// since another changed the indexes still plans each query with the
// indexes its read snapshot has: an index created there serves a sort, a
// use_index and an empty answer, and one dropped there is no longer used.
func TestFindPlansWithAnotherHandlesIndexes(t *testing.T) {
	a, b := twoHandles(t)
	put(t, a, "x", `{"n": 1}`)
	put(t, a, "y", `{"n": 2}`)
	find(t, b, `{"selector": {"n": {"$gt": 0}}}`) // b has seen the set without indexes
	createIndex(t, a, `{"index": {"fields": ["n"]}, "ddoc": "d", "name": "n"}`)
	res := find(t, b, `{"selector": {"n": {"$gt": 0}}, "sort": [{"n": "desc"}]}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"y", "x"}) || res.Warning != "" {
		t.Fatalf("sorted by a's new index: %v %q", got, res.Warning)
	}
	createIndex(t, a, `{"index": {"fields": ["n", "m"]}, "ddoc": "e", "name": "nm"}`)
	res = find(t, b, `{"selector": {"n": {"$gt": 5}, "m": 1}, "use_index": ["e", "nm"], "allow_fallback": false}`)
	if got := ids(t, res); len(got) != 0 || res.Warning != "" {
		t.Fatalf("an empty answer through a's other new index: %v %q", got, res.Warning)
	}
	if err := query.DeleteIndex(bg, a, "d", "n"); err != nil {
		t.Fatal(err)
	}
	if _, err := query.Find(bg, b, []byte(`{"selector": {"n": {"$gt": 0}}, "sort": [{"n": "desc"}]}`)); !errors.Is(err, query.ErrNoUsableIndex) {
		t.Fatalf("sort after a dropped the index: %v", err)
	}
}

// twoHandles opens one new file twice, as two processes would.
func twoHandles(t *testing.T) (a, b *localdb.DB) {
	t.Helper()
	path := t.TempDir() + "/shared.db"
	for _, db := range []**localdb.DB{&a, &b} {
		var err error
		if *db, err = localdb.Open(path, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*db).Close() })
	}
	return a, b
}

// TestFindStaleIndexIDReused: a handle whose cached index set names an
// index that another handle dropped, and whose id the file gave to a new
// index with keys of another shape, answers from the snapshot's indexes,
// not by reading the new index's entries as the old one's.
func TestFindStaleIndexIDReused(t *testing.T) {
	a, b := twoHandles(t)
	put(t, a, "x", `{"n": 1, "m": 2}`)
	createIndex(t, a, `{"index": {"fields": ["n"]}, "ddoc": "d", "name": "n"}`)
	q := `{"selector": {"n": {"$gt": 0}}, "use_index": ["d", "n"], "allow_fallback": false}`
	if got := ids(t, find(t, b, q)); len(got) != 1 {
		t.Fatalf("before: %v", got)
	}
	if err := query.DeleteIndex(bg, a, "d", "n"); err != nil {
		t.Fatal(err)
	}
	createIndex(t, a, `{"index": {"fields": ["n", "m"]}, "ddoc": "e", "name": "nm"}`)
	_, err := query.Find(bg, b, []byte(q))
	var ce *couchdoc.Error
	if !errors.As(err, &ce) || ce.Name != "invalid_index" {
		t.Fatalf("after the index was dropped and its id reused: %v", err)
	}
}
