package server

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestVDUReasonNotAString: a validate_doc_update that throws an object or
// a number as its reason gets it answered as it is, on a PUT and per
// document in _bulk_docs, as CouchDB 3.5 answers (checked on it).
func TestVDUReasonNotAString(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(http.StatusCreated, "PUT", "/d", nil)
	ts.must(http.StatusCreated, "PUT", "/d/_design/v", map[string]string{
		"validate_doc_update": `function (n) { if (n.o) throw({forbidden: {nested: true}}); if (n.u) throw({unauthorized: {a: [1]}}); if (n.s) throw({forbidden: 42}); }`})
	r := ts.must(http.StatusCreated, "POST", "/d/_bulk_docs", map[string]any{"docs": []map[string]any{
		{"_id": "x", "o": 1}, {"_id": "y", "u": 1}, {"_id": "z", "s": 1}, {"_id": "w"}}})
	var got []map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &got); err != nil || len(got) != 4 {
		t.Fatalf("_bulk_docs: %s (%v)", r.body, err)
	}
	for i, want := range []string{`{"nested":true}`, `{"a":[1]}`, `42`} {
		if string(got[i]["reason"]) != want {
			t.Errorf("%s: reason %s, want %s", got[i]["id"], got[i]["reason"], want)
		}
	}
	if string(got[3]["ok"]) != "true" {
		t.Errorf("w: %s", r.body)
	}
	r = ts.must(http.StatusUnauthorized, "PUT", "/d/u1", map[string]any{"u": 1})
	if m := r.json(t); m["error"] != "unauthorized" || m["reason"].(map[string]any)["a"] == nil {
		t.Errorf("PUT: %s", r.body)
	}
}
