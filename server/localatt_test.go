package server

import "testing"

// Local documents have no attachments, as in CouchDB 3.5.0: _attachments
// in a PUT (or a _bulk_docs entry) are dropped and the write succeeds,
// and any path below a local id is a 400 (chttpd_db:db_req), whatever
// the method; a missing database is still a 404 first.
func TestLocalDocsHaveNoAttachments(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	att := map[string]any{"a.txt": map[string]any{"content_type": "text/plain", "data": "aGVsbG8="}}
	ts.must(201, "PUT", "/db/_local/x", map[string]any{"v": 1, "_attachments": att})
	g := ts.must(200, "GET", "/db/_local/x", nil).json(t)
	if g["v"] != 1.0 || g["_attachments"] != nil {
		t.Errorf("GET _local/x = %v", g)
	}
	ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": []any{map[string]any{"_id": "_local/y", "_attachments": att}}})
	if g := ts.must(200, "GET", "/db/_local/y", nil).json(t); g["_attachments"] != nil {
		t.Errorf("GET _local/y = %v", g)
	}
	const reason = "_local documents do not accept attachments."
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		ts.wantReason(400, "bad_request", reason, m, "/db/_local/x/a.txt", nil)
	}
	ts.wantReason(400, "bad_request", reason, "GET", "/db/_local/x/dir/a.txt", nil)
	ts.wantReason(400, "bad_request", "Invalid _local document id.", "GET", "/db/_local", nil)
	ts.wantReason(400, "bad_request", "Invalid _local document id.", "GET", "/db/_local/", nil)
	ts.wantReason(404, "not_found", "Database does not exist.", "GET", "/nodb/_local/x/a.txt", nil)
}
