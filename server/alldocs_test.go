package server

import (
	"encoding/base64"
	"net/url"
	"testing"
)

// _all_docs?include_docs=true&attachments=true inlines attachment bodies
// as CouchDB 3.5.0 does (base64 "data", no stub, no length), by GET and by
// POST with keys; without attachments=true, or without include_docs, the
// rows carry stubs or no document.
func TestAllDocsAttachments(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "a", map[string]any{"n": 1, "_attachments": map[string]any{
		"t.txt": map[string]any{"content_type": "text/plain", "data": base64.StdEncoding.EncodeToString([]byte("hello"))},
		"e.bin": map[string]any{"content_type": "application/octet-stream", "data": ""},
	}})
	ts.putDoc("db", "b", map[string]any{"n": 2})
	atts := func(row any) map[string]any {
		t.Helper()
		doc := row.(map[string]any)["doc"].(map[string]any)
		m, _ := doc["_attachments"].(map[string]any)
		return m
	}
	check := func(method, path string, body any) {
		t.Helper()
		rows := ts.must(200, method, path, body).json(t)["rows"].([]any)
		if len(rows) != 2 {
			t.Fatalf("%s %s: %d rows", method, path, len(rows))
		}
		a := atts(rows[0])
		txt, _ := a["t.txt"].(map[string]any)
		if txt["data"] != "aGVsbG8=" || txt["stub"] != nil || txt["length"] != nil || txt["revpos"] != 1.0 ||
			txt["content_type"] != "text/plain" || txt["digest"] != "md5-XUFAKrxLKna5cZ2REBfFkg==" {
			t.Errorf("%s %s: t.txt = %v", method, path, txt)
		}
		if e, _ := a["e.bin"].(map[string]any); e["data"] != "" || e["stub"] != nil {
			t.Errorf("%s %s: e.bin = %v", method, path, e)
		}
		if atts(rows[1]) != nil {
			t.Errorf("%s %s: b has attachments: %v", method, path, rows[1])
		}
	}
	check("GET", "/db/_all_docs?include_docs=true&attachments=true", nil)
	check("POST", "/db/_all_docs?include_docs=true&attachments=true", map[string]any{"keys": []string{"a", "b"}})
	check("GET", "/db/_all_docs?include_docs=true&attachments=true&conflicts=true&keys="+url.QueryEscape(`["a","b"]`), nil)

	rows := ts.must(200, "GET", "/db/_all_docs?include_docs=true", nil).json(t)["rows"].([]any)
	if txt := atts(rows[0])["t.txt"].(map[string]any); txt["stub"] != true || txt["length"] != 5.0 || txt["data"] != nil {
		t.Errorf("include_docs without attachments=true: t.txt = %v", txt)
	}
	rows = ts.must(200, "GET", "/db/_all_docs?attachments=true", nil).json(t)["rows"].([]any)
	if _, ok := rows[0].(map[string]any)["doc"]; ok {
		t.Errorf("attachments=true without include_docs: %v", rows[0])
	}
}

// keys with key, start_key or end_key is CouchDB 3.5.0's 400
// query_parse_error (couch_mrview_util:validate_args), except a single key
// that is the same as key.
func TestAllDocsKeysWithKey(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "a", map[string]any{})
	const reason = "`keys` is incompatible with `key`, `start_key` and `end_key`"
	q := url.QueryEscape
	for _, path := range []string{
		"?key=" + q(`"a"`) + "&keys=" + q(`["a","b"]`),
		"?keys=" + q(`["a","b"]`) + "&startkey=" + q(`"a"`),
		"?end_key=" + q(`"z"`) + "&keys=" + q(`["a","b"]`),
		"?key=" + q(`"b"`) + "&keys=" + q(`["a"]`),
	} {
		ts.wantReason(400, "query_parse_error", reason, "GET", "/db/_all_docs"+path, nil)
	}
	ts.wantReason(400, "query_parse_error", reason, "POST", "/db/_all_docs?key="+q(`"a"`), map[string]any{"keys": []string{"a", "b"}})
	// Allowed: one key equal to key, and an empty keys list.
	ts.must(200, "GET", "/db/_all_docs?key="+q(`"a"`)+"&keys="+q(`["a"]`), nil)
	ts.must(200, "POST", "/db/_all_docs?key="+q(`"a"`), map[string]any{"keys": []string{"a"}})
	ts.must(200, "GET", "/db/_all_docs?key="+q(`"a"`)+"&keys="+q(`[]`), nil)
}
