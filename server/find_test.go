package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestFindAndIndexEndpoints(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	for i := 0; i < 12; i++ {
		ts.must(201, "PUT", fmt.Sprintf("/db/d%02d", i), fmt.Sprintf(`{"kind": "k%d", "n": %d}`, i%3, i))
	}
	// No index: the _all_docs scan, with CouchDB's warning.
	m := ts.must(200, "POST", "/db/_find", `{"selector": {"kind": "k1"}, "fields": ["_id", "n"]}`).json(t)
	if docs := m["docs"].([]any); len(docs) != 4 || !reflect.DeepEqual(docs[0], map[string]any{"_id": "d01", "n": 1.0}) ||
		!strings.HasPrefix(m["warning"].(string), "No matching index found") || m["bookmark"] == nil {
		t.Fatalf("find: %v", m)
	}
	ts.wantError(400, "no_usable_index", "POST", "/db/_find", `{"selector": {"kind": "k1"}, "sort": ["n"]}`)
	// The answer is streamed; with no documents it is still whole.
	if m := ts.must(200, "POST", "/db/_find", `{"selector": {"kind": "none"}}`).json(t); !reflect.DeepEqual(m["docs"], []any{}) || m["bookmark"] != "nil" {
		t.Fatalf("empty find: %v", m)
	}
	m = ts.must(200, "POST", "/db/_index", `{"index": {"fields": ["kind", "n"]}, "ddoc": "by-kind", "name": "kind-n", "type": "json"}`).json(t)
	if !reflect.DeepEqual(m, map[string]any{"result": "created", "id": "_design/by-kind", "name": "kind-n"}) {
		t.Fatalf("create: %v", m)
	}
	if m := ts.must(200, "POST", "/db/_index", `{"index": {"fields": ["kind", "n"]}, "ddoc": "by-kind", "name": "kind-n"}`).json(t); m["result"] != "exists" {
		t.Fatalf("create again: %v", m)
	}
	// The index is a design doc, readable like any.
	ddoc := ts.must(200, "GET", "/db/_design/by-kind", nil).json(t)
	if ddoc["language"] != "query" || ddoc["views"].(map[string]any)["kind-n"].(map[string]any)["reduce"] != "_count" {
		t.Fatalf("design doc: %v", ddoc)
	}
	m = ts.must(200, "POST", "/db/_find", `{"selector": {"kind": "k1", "n": {"$gt": 2}}, "sort": [{"kind": "desc"}, {"n": "desc"}], "limit": 2, "execution_stats": true}`).json(t)
	if len(m["docs"].([]any)) != 2 || m["docs"].([]any)[0].(map[string]any)["_id"] != "d10" || m["warning"] != nil {
		t.Fatalf("indexed find: %v", m)
	}
	if st := m["execution_stats"].(map[string]any); st["total_keys_examined"] != 2.0 || st["results_returned"] != 2.0 {
		t.Fatalf("stats: %v", st)
	}
	ex := ts.must(200, "POST", "/db/_explain", `{"selector": {"kind": "k1", "n": {"$gt": 2}}}`).json(t)
	if ex["dbname"] != "db" || ex["index"].(map[string]any)["name"] != "kind-n" ||
		!reflect.DeepEqual(ex["mrargs"].(map[string]any)["start_key"], []any{"k1", 2.0}) {
		t.Fatalf("explain: %v", ex)
	}
	list := ts.must(200, "GET", "/db/_index", nil).json(t)
	if list["total_rows"] != 2.0 || len(list["indexes"].([]any)) != 2 {
		t.Fatalf("list: %v", list)
	}
	ts.wantError(405, "method_not_allowed", "GET", "/db/_find", nil)
	ts.wantError(405, "method_not_allowed", "PUT", "/db/_index", `{}`)
	ts.wantError(415, "bad_content_type", "POST", "/db/_find", `{"selector": {}}`, "Content-Type", "text/plain")
	ts.wantError(400, "missing_required_key", "POST", "/db/_find", `{}`)
	ts.wantError(400, "invalid_operator", "POST", "/db/_find", `{"selector": {"a": {"$bogus": 1}}}`)
	ts.wantError(404, "not_found", "POST", "/nodb/_find", `{"selector": {}}`)
	ts.wantError(404, "not_found", "DELETE", "/db/_index/by-kind/json/nope", nil)
	ts.must(200, "DELETE", "/db/_index/_design/by-kind/json/kind-n", nil)
	ts.wantError(404, "not_found", "GET", "/db/_design/by-kind", nil)
	if list := ts.must(200, "GET", "/db/_index", nil).json(t); list["total_rows"] != 1.0 {
		t.Fatalf("list after delete: %v", list)
	}
	var res struct {
		Docs []json.RawMessage `json:"docs"`
	}
	json.Unmarshal(ts.must(200, "POST", "/db/_find", `{"selector": {"n": {"$lt": 3}}}`).body, &res)
	if len(res.Docs) != 3 {
		t.Fatalf("after delete: %d docs", len(res.Docs))
	}
}
