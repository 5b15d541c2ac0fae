package server

import (
	"net/url"
	"strings"
	"testing"
)

func TestDocCRUD(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	rev1 := ts.putDoc("db", "doc", map[string]any{"a": 1})
	if !strings.HasPrefix(rev1, "1-") {
		t.Fatalf("rev %q", rev1)
	}
	r := ts.must(200, "GET", "/db/doc", nil)
	m := r.json(t)
	if m["_id"] != "doc" || m["_rev"] != rev1 || m["a"] != 1.0 {
		t.Fatalf("GET: %s", r.body)
	}
	if r.header.Get("ETag") != `"`+rev1+`"` {
		t.Fatalf("ETag %q", r.header.Get("ETag"))
	}
	ts.must(304, "GET", "/db/doc", nil, "If-None-Match", `"`+rev1+`"`)
	ts.wantError(409, "conflict", "PUT", "/db/doc", map[string]any{"a": 2})
	ts.wantError(409, "conflict", "PUT", "/db/doc", map[string]any{"_rev": "1-0000", "a": 2})
	rev2 := ts.putDoc("db", "doc?rev="+rev1, map[string]any{"a": 2})
	ts.wantError(400, "bad_request", "PUT", "/db/doc?rev="+rev2, map[string]any{"_rev": rev1, "a": 3})
	rev3 := ts.putDoc("db", "doc", map[string]any{"_rev": rev2, "a": 3})

	m = ts.must(200, "GET", "/db/doc?rev="+rev1, nil).json(t)
	if m["a"] != 1.0 {
		t.Fatalf("old rev: %v", m)
	}
	m = ts.must(200, "GET", "/db/doc?revs=true&revs_info=true", nil).json(t)
	revs := m["_revisions"].(map[string]any)
	if revs["start"] != 3.0 || len(revs["ids"].([]any)) != 3 || len(m["_revs_info"].([]any)) != 3 {
		t.Fatalf("revs: %v", m)
	}
	ts.wantError(409, "conflict", "DELETE", "/db/doc", nil)
	ts.wantError(409, "conflict", "DELETE", "/db/doc?rev="+rev1, nil)
	del := ts.must(200, "DELETE", "/db/doc", nil, "If-Match", `"`+rev3+`"`).json(t)
	if del["ok"] != true || !strings.HasPrefix(del["rev"].(string), "4-") {
		t.Fatalf("DELETE: %v", del)
	}
	ts.wantError(404, "not_found", "GET", "/db/doc", nil)
	if m := ts.must(200, "GET", "/db/doc?rev="+del["rev"].(string), nil).json(t); m["_deleted"] != true {
		t.Fatalf("tombstone: %v", m)
	}
	// Recreate after deletion.
	ts.putDoc("db", "doc", map[string]any{"again": true})

	// POST /db generates an id.
	p := ts.must(201, "POST", "/db", map[string]any{"x": 1}).json(t)
	if len(p["id"].(string)) != 32 {
		t.Fatalf("POST: %v", p)
	}
	p = ts.must(201, "POST", "/db", map[string]any{"_id": "given"}).json(t)
	if p["id"] != "given" {
		t.Fatalf("POST with _id: %v", p)
	}
	ts.wantError(404, "not_found", "GET", "/db/nosuch", nil)
	ts.wantError(405, "method_not_allowed", "POST", "/db/doc", "{}")
}

// Ids with characters that need escaping are unescaped once, and "%2F"
// is part of the id.
func TestTrickyDocIDs(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ids := []string{"a/b", "a+b", "a%b", "a?b", "a#b", "a b", "ü日本", "a&b=c", "_design/dd", "x%2Fy", "'\"", "a;b"}
	for _, id := range ids {
		// '+' travels as %2B: CouchDB reads a raw '+' in a path as a space.
		esc := strings.ReplaceAll(url.PathEscape(id), "+", "%2B")
		if strings.HasPrefix(id, "_design/") {
			esc = "_design/" + url.PathEscape(strings.TrimPrefix(id, "_design/"))
		}
		rev := ts.putDoc("db", esc, map[string]any{"id": id})
		m := ts.must(200, "GET", "/db/"+esc, nil).json(t)
		if m["_id"] != id || m["_rev"] != rev {
			t.Errorf("id %q: GET %v", id, m)
		}
	}
	// The design doc also answers with its slash escaped.
	ts.must(200, "GET", "/db/_design%2Fdd", nil)
	var all struct {
		Rows []struct{ ID string }
	}
	if err := jsonUnmarshal(ts.must(200, "GET", "/db/_all_docs", nil).body, &all); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range all.Rows {
		got[r.ID] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Errorf("_all_docs lacks %q: %v", id, got)
		}
	}
	if len(all.Rows) != len(ids) {
		t.Errorf("_all_docs has %d rows, want %d", len(all.Rows), len(ids))
	}
}

// Malformed requests are 400 with a CouchDB error body and change nothing.
func TestBadInputChangesNothing(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	rev := ts.putDoc("db", "doc", map[string]any{"a": 1})
	seq := ts.updateSeq("db")
	bad := []struct {
		method, path string
		body         any
		name         string
	}{
		{"PUT", "/db/doc2", "{", "bad_request"},
		{"PUT", "/db/doc2", "[1]", "bad_request"},
		{"PUT", "/db/doc2", `{"a":1} x`, "bad_request"},
		{"PUT", "/db/doc2", `{"_foo":1}`, "doc_validation"},
		{"PUT", "/db/doc2", `{"_rev":"x-y"}`, "bad_request"},
		{"PUT", "/db/doc2", `{"_attachments":{"a":{"data":"!!"}}}`, "bad_request"},
		{"PUT", "/db/doc?rev=bogus", `{}`, "bad_request"},
		{"PUT", "/db/doc?new_edits=maybe", `{}`, "bad_request"},
		{"PUT", "/db/doc?new_edits=false", `{"_rev":"2-abc","_revisions":{"start":2,"ids":["abd","aaa"]}}`, "bad_request"},
		{"PUT", "/db/_bad", `{}`, "illegal_docid"},
		{"PUT", "/db/%FF%FE", `{}`, "illegal_docid"}, // CouchDB: "Document id must be valid UTF-8"
		{"PUT", "/db/_design/", `{}`, "bad_request"},
		{"GET", "/db/%FF?open_revs=all", nil, "illegal_docid"},
		{"DELETE", "/db/doc?rev=nope", nil, "bad_request"},
		{"GET", "/db/doc?rev=nope", nil, "bad_request"},
		{"GET", "/db/doc?revs=yes", nil, "bad_request"},
		{"GET", "/db/doc?open_revs=[1]", nil, "bad_request"},
		{"GET", "/db/doc?open_revs=[\"x\"]", nil, "bad_request"},
		{"GET", "/db/doc?open_revs=nope", nil, "bad_request"},
		{"POST", "/db", `{"_id":"_nope"}`, "illegal_docid"},
		{"POST", "/db", `nope`, "bad_request"},
		{"POST", "/db/_bulk_docs", `{"docs":[{"_id":"ok1"},{"_id":"_bad"}]}`, "illegal_docid"},
		{"POST", "/db/_bulk_docs", `{"docs":[{"_id":"ok1"},{"_id":"x","_rev":"zz"}]}`, "bad_request"},
		{"POST", "/db/_bulk_docs", `{"docs":[{"_id":"ok1"}, 3]}`, "bad_request"},
		{"POST", "/db/_bulk_docs", `{"docs":{}}`, "bad_request"},
		{"POST", "/db/_bulk_docs", `{}`, "bad_request"},
		{"POST", "/db/_bulk_docs", `{"docs":[{"_id":"ok1","_attachments":{"a":{"follows":true}}}]}`, "bad_request"},
		{"POST", "/db/_bulk_docs", `{"new_edits":false,"docs":[{"_id":"ok1"}]}`, "bad_request"},
		{"POST", "/db/_revs_diff", `{"doc":["nope"]}`, "bad_request"},
		{"POST", "/db/_revs_diff", `{"doc":"1-a"}`, "bad_request"},
		{"POST", "/db/_bulk_get", `{"docs":3}`, "bad_request"},
		{"POST", "/db/_bulk_get", `{}`, "bad_request"},
		{"GET", "/db/_all_docs?keys=[1", nil, "bad_request"},
		{"GET", "/db/_all_docs?limit=-1", nil, "bad_request"},
		{"POST", "/db/_all_docs", `{"keys":"x"}`, "bad_request"},
		{"GET", "/db/_changes?since=abc", nil, "bad_request"},
		{"GET", "/db/_changes?feed=weird", nil, "bad_request"},
		{"GET", "/db/_changes?style=weird", nil, "bad_request"},
		{"GET", "/db/_changes?filter=_doc_ids", nil, "bad_request"},
		{"POST", "/db/_changes?filter=_selector", `{"selector":{"$bad":1}}`, "bad_request"},
		{"POST", "/db/_changes?filter=_selector", `{}`, "bad_request"},
		{"POST", "/db/_changes", `{`, "bad_request"},
		{"PUT", "/db/_local/c", `[]`, "bad_request"},
		{"PUT", "/db/doc/att?rev=bad", "bytes", "bad_request"},
		{"PUT", "/db/doc/_att?rev=" + rev, "bytes", "bad_request"},
		{"PUT", "/db/doc/%FF?rev=" + rev, "bytes", "bad_request"},
		{"PUT", "/db/doc", "--x\r\n", "bad_request"},
	}
	for _, b := range bad {
		var hdr []string
		if b.path == "/db/doc" && b.method == "PUT" {
			hdr = []string{"Content-Type", `multipart/related; boundary="x"`}
		}
		ts.wantError(400, b.name, b.method, b.path, b.body, hdr...)
	}
	// A filter function that does not exist is a 404, as in CouchDB.
	ts.wantError(404, "not_found", "GET", "/db/_changes?filter=ddoc/f", nil)
	if got := ts.updateSeq("db"); got != seq {
		t.Fatalf("update_seq moved from %v to %v", seq, got)
	}
	if m := ts.must(200, "GET", "/db/doc", nil).json(t); m["_rev"] != rev {
		t.Fatalf("doc changed: %v", m)
	}
	ts.wantError(404, "not_found", "GET", "/db/ok1", nil)
}

func TestLocalDocs(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.wantError(404, "not_found", "GET", "/db/_local/cp", nil)
	m := ts.must(201, "PUT", "/db/_local/cp", map[string]any{"seq": 1}).json(t)
	if m["id"] != "_local/cp" || m["rev"] != "0-1" {
		t.Fatalf("PUT local: %v", m)
	}
	g := ts.must(200, "GET", "/db/_local/cp", nil).json(t)
	if g["_id"] != "_local/cp" || g["_rev"] != "0-1" || g["seq"] != 1.0 {
		t.Fatalf("GET local: %v", g)
	}
	// As CouchDB: no revision check on local docs. A PUT without _rev
	// starts over at 0-1, any 0-N (a stale one too) is followed by 0-N+1.
	if m := ts.must(201, "PUT", "/db/_local/cp", map[string]any{"seq": 2}).json(t); m["rev"] != "0-1" {
		t.Fatalf("PUT local without rev: %v", m)
	}
	m = ts.must(201, "PUT", "/db/_local/cp", map[string]any{"_rev": "0-1", "seq": 2}).json(t)
	if m["rev"] != "0-2" {
		t.Fatalf("update local: %v", m)
	}
	if m := ts.must(201, "PUT", "/db/_local/cp", map[string]any{"_rev": "0-1", "seq": 3}).json(t); m["rev"] != "0-2" {
		t.Fatalf("stale local rev: %v", m)
	}
	if g := ts.must(200, "GET", "/db/_local/cp", nil).json(t); g["seq"] != 3.0 {
		t.Fatalf("after the stale write: %v", g)
	}
	ts.wantError(400, "bad_request", "PUT", "/db/_local/cp", map[string]any{"_rev": "1-abc"})
	// Ids with a slash and escapes.
	ts.must(201, "PUT", "/db/_local/a%2Fb", map[string]any{"x": 1})
	if g := ts.must(200, "GET", "/db/_local/a%2Fb", nil).json(t); g["_id"] != "_local/a/b" {
		t.Fatalf("local a/b: %v", g)
	}
	// Local docs stay out of the feed and _all_docs.
	if r := ts.must(200, "GET", "/db/_changes", nil); strings.Contains(string(r.body), "_local") {
		t.Fatalf("_changes lists a local doc: %s", r.body)
	}
	ts.must(200, "DELETE", "/db/_local/cp?rev=0-2", nil)
	ts.wantError(404, "not_found", "GET", "/db/_local/cp", nil)
	if seq := ts.updateSeq("db"); seq != 0 {
		t.Fatalf("local docs moved update_seq to %v", seq)
	}
}
