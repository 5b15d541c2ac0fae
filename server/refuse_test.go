package server

import (
	"net/url"
	"testing"
)

// What CouchDB 3.5.0 refuses, refused with its status, error and reason;
// what it accepts, accepted.
func TestRefusesAsCouchDB(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	att := map[string]any{"_a.txt": map[string]any{"content_type": "text/plain", "data": "aGk="}}
	const attReason = "Attachment name '_a.txt' starts with prohibited character '_'"

	// Attachment names starting with '_' (chttpd_db:validate_attachment_name),
	// however the document comes.
	ts.wantReason(400, "bad_request", attReason, "PUT", "/db/d", map[string]any{"_attachments": att})
	ts.wantReason(400, "bad_request", attReason, "POST", "/db", map[string]any{"_id": "d", "_attachments": att})
	ts.wantReason(400, "bad_request", attReason, "POST", "/db/_bulk_docs", map[string]any{"docs": []any{map[string]any{"_id": "d", "_attachments": att}}})
	ts.wantReason(400, "bad_request", attReason, "POST", "/db/_bulk_docs", map[string]any{"new_edits": false,
		"docs": []any{map[string]any{"_id": "d", "_rev": "1-0123456789abcdef0123456789abcdef", "_attachments": att}}})
	ts.wantReason(400, "bad_request", attReason, "PUT", "/db/_local/d", map[string]any{"_attachments": att})
	rev := ts.putDoc("db", "d", map[string]any{})
	ts.wantReason(400, "bad_request", attReason, "PUT", "/db/d/_a.txt?rev="+rev, "hi", "Content-Type", "text/plain")
	ts.wantReason(400, "bad_request", attReason, "DELETE", "/db/d/_a.txt?rev="+rev, nil)

	// The special members CouchDB keeps in the body (couch_doc:transfer_fields).
	repl := map[string]any{"_replication_id": "r1", "_replication_state": "completed",
		"_replication_state_time": "2026-11-27T00:00:00Z", "_replication_state_reason": "ok",
		"_replication_stats": map[string]any{"docs_read": 3}, "_access": []string{"bob"}, "source": "a"}
	ts.putDoc("db", "repl", repl)
	got := ts.must(200, "GET", "/db/repl", nil).json(t)
	for k, v := range repl {
		if k != "_replication_stats" && k != "_access" && got[k] != v {
			t.Errorf("GET repl: %s = %v, want %v", k, got[k], v)
		}
	}
	if s, _ := got["_replication_stats"].(map[string]any); s["docs_read"] != 3.0 {
		t.Errorf("GET repl: _replication_stats = %v", got["_replication_stats"])
	}
	ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": []any{map[string]any{"_id": "repl2", "_replication_state": "error"}}})
	ts.wantReason(400, "doc_validation", "Bad special document member: _replication", "PUT", "/db/bad", map[string]any{"_replication": 1})

	// A Mango index in both directions (mango_sort:validate), as a sort.
	const mixed = "Sorts currently only support a single direction for all fields."
	ts.wantReason(400, "unsupported_mixed_sort", mixed, "POST", "/db/_index",
		map[string]any{"index": map[string]any{"fields": []any{map[string]any{"a": "asc"}, map[string]any{"b": "desc"}}}})
	ts.wantReason(400, "unsupported_mixed_sort", mixed, "POST", "/db/_find",
		map[string]any{"selector": map[string]any{"a": 1}, "sort": []any{"a", map[string]any{"b": "desc"}}})
	ts.must(200, "POST", "/db/_index", map[string]any{"index": map[string]any{"fields": []any{map[string]any{"a": "desc"}, map[string]any{"b": "desc"}}}})

	// An empty id (couch_doc:validate_docid).
	const empty = "Document id must not be empty"
	ts.wantReason(400, "illegal_docid", empty, "POST", "/db", map[string]any{"_id": "", "a": 1})
	ts.wantReason(400, "illegal_docid", empty, "POST", "/db/_bulk_docs", map[string]any{"docs": []any{map[string]any{"_id": "ok"}, map[string]any{"_id": ""}}})
	ts.wantReason(400, "illegal_docid", empty, "PUT", "/db/x", map[string]any{"_id": ""})
	ts.wantReason(400, "illegal_docid", "Illegal document id `_design/`", "POST", "/db", map[string]any{"_id": "_design/"})
	ts.wantError(404, "not_found", "GET", "/db/ok", nil) // the batch wrote nothing
	if r := ts.must(200, "GET", "/db/_all_docs?keys="+url.QueryEscape(`["d","repl","repl2"]`), nil).json(t)["rows"].([]any); len(r) != 3 {
		t.Errorf("rows %v", r)
	}
}
