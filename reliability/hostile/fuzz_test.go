package hostile

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/server"
)

var fuzzMethods = []string{"GET", "PUT", "POST", "DELETE", "COPY", "HEAD", "OPTIONS"}
var fuzzTypes = []string{"application/json", `multipart/related; boundary="b"`, "text/plain", "", "application/octet-stream"}

// FuzzServerRequest sends arbitrary requests (method, path with query,
// content type, body) to the server over one store: it must never panic,
// never answer 500, and the store must keep its invariants.
func FuzzServerRequest(f *testing.F) {
	srv, err := server.New(server.Config{DataDir: f.TempDir(), MaxBodySize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { srv.Close() })
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("PUT", "/db", nil))
	if rec.Code != 201 {
		f.Fatalf("create db: %d", rec.Code)
	}
	for _, s := range []struct {
		m, ct uint8
		path  string
		body  string
	}{
		{1, 0, "/db/doc", `{"a":1}`},
		{1, 0, "/db/doc?new_edits=false", `{"_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"x":"y"}`},
		{2, 0, "/db/_bulk_docs", `{"new_edits":false,"docs":[{"_id":"x","_rev":"1-a","_attachments":{"f":{"data":"aGk=","content_type":"text/plain"}}}]}`},
		{2, 0, "/db/_bulk_get?revs=true&latest=true", `{"docs":[{"id":"x","rev":"1-a","atts_since":["1-a"]}]}`},
		{2, 0, "/db/_revs_diff", `{"x":["1-a","2-b"]}`},
		{0, 0, "/db/_changes?style=all_docs&since=0&limit=5&filter=_doc_ids&doc_ids=[\"x\"]", ``},
		{2, 0, "/db/_changes?filter=_selector", `{"selector":{"a":{"$gt":1}}}`},
		{0, 0, "/db/x?open_revs=[\"1-a\"]&revs=true&attachments=true", ``},
		{1, 1, "/db/y", "--b\r\nContent-Type: application/json\r\n\r\n{\"_attachments\":{\"f\":{\"follows\":true,\"length\":2,\"content_type\":\"text/plain\"}}}\r\n--b\r\n\r\nhi\r\n--b--"},
		{1, 2, "/db/z/att%2Fname.txt", "hello"},
		{1, 0, "/db/_local/cp", `{"history":[]}`},
		{0, 0, "/db/_all_docs?keys=[\"x\"]&include_docs=true&conflicts=true", ``},
		{3, 0, "/db/x?rev=1-a", ``},
		{4, 0, "/db/x", ``},
	} {
		f.Add(s.m, s.ct, s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, m, ct uint8, path string, body []byte) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		// Only this database: creating or deleting others is not the point.
		if !strings.HasPrefix(path, "/db/") && path != "/db" && !strings.HasPrefix(path, "/db?") {
			path = "/db/" + strings.TrimPrefix(path, "/")
		}
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		if method == "DELETE" && (path == "/db" || strings.HasPrefix(path, "/db?")) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, "http://127.0.0.1"+path, bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		if c := fuzzTypes[int(ct)%len(fuzzTypes)]; c != "" {
			req.Header.Set("Content-Type", c)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code >= 500 && ctx.Err() == nil {
			t.Fatalf("%s %s (%s, %q): status %d: %s", method, path, req.Header.Get("Content-Type"), body, rec.Code, rec.Body.String())
		}
		if err := srv.CheckInvariants(context.Background()); err != nil {
			t.Fatalf("%s %s (%q) broke an invariant: %v", method, path, body, err)
		}
	})
}
