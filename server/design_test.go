package server

import (
	"net/url"
	"testing"
)

// Requests for design document functions and view or selector filters
// get CouchDB 3.5.0's answers up to where CouchDB would run JavaScript:
// its 404s for a missing design document (missing, deleted) or function
// (missing_named_view, "missing json key: NAME"), its 400s for malformed
// filter parameters, and never an attachment's "Document is missing
// attachment". An existing function other than a view is refused with a
// 400 bad_request.
func TestDesignFunctionsAnswerAsCouchDB(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	fn := "function(doc){ emit(doc._id, 1); }"
	ts.putDoc("db", "_design/app", map[string]any{
		"views":   map[string]any{"v": map[string]any{"map": fn}},
		"filters": map[string]any{"f": "function(doc){ return true; }"},
		"shows":   map[string]any{"s": fn}, "lists": map[string]any{"l": fn}, "updates": map[string]any{"u": fn},
	})
	rev := ts.putDoc("db", "_design/gone", map[string]any{"views": map[string]any{}})
	ts.must(200, "DELETE", "/db/_design/gone?rev="+rev, nil)
	ts.putDoc("db", "_design/bare", map[string]any{})

	for _, c := range []struct {
		method, path string
		status       int
		name, reason string
	}{
		{"GET", "/db/_design/nope/_view/v", 404, "not_found", "missing"},
		{"GET", "/db/_design/gone/_view/v", 404, "not_found", "deleted"},
		{"GET", "/db/_design/app/_view/nope", 404, "not_found", "missing_named_view"},
		{"POST", "/db/_design/app/_view/nope", 404, "not_found", "missing_named_view"},
		{"GET", "/db/_design/bare/_view/v", 404, "not_found", "missing_named_view"},
		{"PUT", "/db/_design/app/_view/v", 405, "method_not_allowed", "Only GET,POST,HEAD allowed"},
		{"GET", "/db/_design/app/_show/nope", 404, "not_found", "missing json key: nope"},
		{"GET", "/db/_design/bare/_show/s", 404, "not_found", "missing json key: shows"},
		{"GET", "/db/_design/app/_list/nope/v", 404, "not_found", "missing json key: nope"},
		{"POST", "/db/_design/app/_update/nope/doc", 404, "not_found", "missing json key: nope"},
		{"GET", "/db/_design/app/_rewrite/x", 404, "rewrite_error", "Invalid path."},
		{"GET", "/db/_design/nope/_show/s", 404, "not_found", "missing"},

		{"GET", "/db/_changes?filter=_view", 400, "bad_request", "`view` filter parameter is not provided."},
		{"GET", "/db/_changes?filter=_view&view=app", 400, "bad_request", "`view` must be of the form `designname/viewname`"},
		{"GET", "/db/_changes?filter=_view&view=nope/v", 404, "not_found", "missing"},
		{"GET", "/db/_changes?filter=_view&view=gone/v", 404, "not_found", "deleted"},
		{"GET", "/db/_changes?filter=_view&view=app/nope", 404, "not_found", "missing json key: nope"},
		{"GET", "/db/_changes?filter=_view&view=bare/v", 404, "not_found", "missing json key: views"},
		{"GET", "/db/_changes?filter=app/nope", 404, "not_found", "missing json key: nope"},
		{"GET", "/db/_changes?filter=nope/f", 404, "not_found", "missing"},
		{"GET", "/db/_changes?filter=app/f/x", 400, "bad_request", "`filter` must be of the form `designname/filtername`"},
		{"GET", "/db/_changes?filter=_nope", 400, "bad_request", "unknown builtin filter name"},
		{"GET", "/db/_changes?filter=_selector", 400, "bad_request", "Selector must be specified in POST payload"},
	} {
		ts.wantReason(c.status, c.name, c.reason, c.method, c.path, nil)
	}
	// Existing functions: refused, never taken for attachments.
	for _, p := range []string{"/db/_design/app/_show/s", "/db/_design/app/_list/l/v"} {
		ts.wantError(400, "bad_request", "GET", p, nil)
	}
	ts.wantError(400, "bad_request", "POST", "/db/_design/app/_update/u/doc", map[string]any{})
	// Views and filters run (views_test.go).
	for _, p := range []string{"/db/_changes?filter=app/f", "/db/_changes?filter=_view&view=app/v", "/db/_changes?filter=_view&view=app%2Fv"} {
		ts.must(200, "GET", p, nil)
	}
	ts.putDoc("db", "x", map[string]any{})
	if rows := ts.must(200, "GET", "/db/_design/app/_view/v", nil).json(t)["rows"].([]any); len(rows) != 1 {
		t.Errorf("view rows: %v, want x's", rows)
	}
	// An attachment of a design document is still one.
	ts.wantReason(404, "not_found", "Document is missing attachment", "GET", "/db/_design/app/logo.png", nil)

	// filter=_selector's body (couch_changes:get_selector_and_fields).
	sel := "/db/_changes?filter=_selector"
	for _, body := range []any{map[string]any{}, map[string]any{"selector": 1}, map[string]any{"selector": []any{}}, map[string]any{"selector": nil}} {
		ts.wantReason(400, "bad_request", "Selector error: expected a JSON object", "POST", sel, body)
	}
	ts.wantReason(400, "bad_request", "Selector error: fields must be JSON array", "POST", sel, map[string]any{"selector": map[string]any{}, "fields": "a"})
	ts.wantReason(400, "bad_request", "Invalid operator: $nope", "POST", sel, map[string]any{"selector": map[string]any{"a": map[string]any{"$nope": 1}}})
	r := ts.must(200, "POST", sel+"&"+url.Values{"include_docs": {"true"}}.Encode(), map[string]any{"selector": map[string]any{"_id": "_design/app"}, "fields": []string{"_id"}})
	if rows := r.json(t)["results"].([]any); len(rows) != 1 {
		t.Errorf("_selector feed: %s", r.body)
	}
}
