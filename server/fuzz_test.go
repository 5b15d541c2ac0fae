package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// Query strings never panic, and a refusal is a 400 CouchDB error.
func FuzzQueryParams(f *testing.F) {
	for _, q := range []string{
		"", "since=now&feed=longpoll&heartbeat=true", "since=3-abc&limit=0&style=all_docs", "filter=_doc_ids&doc_ids=[\"a\"]",
		"open_revs=all&revs=true&latest=true", "atts_since=[\"1-a\"]&attachments=true", "keys=[\"a\",\"b\"]&startkey=\"a\"&limit=2",
		"timeout=-1", "heartbeat=abc", "rev=1-x", "%zz", "descending=yes",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u := &url.URL{Path: "/db/_changes", RawQuery: raw}
		check := func(err error) {
			if err == nil {
				return
			}
			var ce *couchdoc.Error
			if !errors.As(err, &ce) || ce.Status != 400 {
				t.Fatalf("query %q: %v is not a 400", raw, err)
			}
		}
		r := &http.Request{Method: "GET", URL: u, Header: http.Header{}}
		_, err := parseFeedParams(r)
		check(err)
		_, err = parseAllDocs(r)
		check(err)
		q := newQuery(u)
		q.getOptions()
		check(q.err)
	})
}

// fuzzTarget is a server with one database holding one document with two
// leaves and an attachment, shared by the runs of a fuzz target.
func fuzzTarget(f *testing.F) *Server {
	s, err := New(Config{DataDir: f.TempDir(), MaxBodySize: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	send := func(method, path, ct, body string) {
		req := httptest.NewRequest(method, path, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", ct)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			f.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	send("PUT", "/db", "", "")
	send("PUT", "/db/doc?new_edits=false", "application/json", `{"_rev":"1-aa","a":1,"_attachments":{"t":{"data":"aGk=","content_type":"text/plain"}}}`)
	send("PUT", "/db/doc?new_edits=false", "application/json", `{"_rev":"2-bb","_revisions":{"start":2,"ids":["bb","aa"]},"_attachments":{"t":{"stub":true,"revpos":1,"digest":"md5-SfaKXIST7CwL9ImCHCH8Ow=="}}}`)
	return s
}

func updateSeq(t *testing.T, s *Server) int64 {
	db, err := s.dbs.get(context.Background(), "db")
	if err != nil {
		t.Fatal(err)
	}
	info, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.UpdateSeq
}

var fuzzEndpoints = []struct{ method, path, ct string }{
	{"PUT", "/db/doc", "application/json"},
	{"PUT", "/db/doc?new_edits=false", "application/json"},
	{"PUT", "/db/doc?new_edits=false", `multipart/related; boundary="b"`},
	{"PUT", "/db/doc", `multipart/related; boundary="b"`},
	{"POST", "/db/_bulk_docs", "application/json"},
	{"POST", "/db/_revs_diff", "application/json"},
	{"POST", "/db/_bulk_get?revs=true", "application/json"},
	{"POST", "/db/_all_docs", "application/json"},
	{"POST", "/db/_changes?filter=_selector", "application/json"},
	{"PUT", "/db/_local/x", "application/json"},
	{"POST", "/db", "application/json"},
	{"POST", "/_session", "application/json"},
}

// Request bodies never cause a 500; a 4xx is a CouchDB error body and
// leaves the database as it was.
func FuzzRequestBodies(f *testing.F) {
	s := fuzzTarget(f)
	seeds := []string{
		`{}`, `{"a":1}`, `{"_rev":"2-bb","b":2}`, `{"_rev":"3-cc","_revisions":{"start":3,"ids":["cc","bb","aa"]}}`,
		`{"docs":[{"_id":"x"},{"_id":"doc","_rev":"1-aa"}]}`, `{"new_edits":false,"docs":[{"_id":"y","_rev":"1-ab"}]}`,
		`{"doc":["1-aa","3-ff"]}`, `{"docs":[{"id":"doc","rev":"2-bb"},{"id":"doc"}]}`, `{"keys":["doc","zz"]}`,
		`{"selector":{"a":{"$gt":0}}}`, `{"_attachments":{"t":{"stub":true}}}`, `{"_deleted":true,"_rev":"2-bb"}`,
		"--b\r\nContent-Type: application/json\r\n\r\n{\"_rev\":\"3-cd\",\"_revisions\":{\"start\":3,\"ids\":[\"cd\",\"bb\",\"aa\"]},\"_attachments\":{\"u\":{\"follows\":true,\"length\":2,\"content_type\":\"text/plain\"}}}\r\n--b\r\n\r\nhi\r\n--b--",
		"--b\r\n\r\n{}\r\n--b--", `{"name":"a","password":"b"}`, `[`, `{"docs":[1]}`, "\x00",
	}
	for i, b := range seeds {
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		before := updateSeq(t, s)
		req := httptest.NewRequest(e.method, e.path, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", e.ct)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", e.method, e.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var eb errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" || eb.Reason == "" {
				t.Fatalf("%s %s %q: %d without an error body: %s", e.method, e.path, body, rec.Code, rec.Body)
			}
			if after := updateSeq(t, s); after != before {
				t.Fatalf("%s %s %q: refused with %d but update_seq moved %d -> %d", e.method, e.path, body, rec.Code, before, after)
			}
		}
		if err := s.CheckInvariants(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
