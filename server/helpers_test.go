package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// tserver is a Server behind httptest, over a temp data directory.
type tserver struct {
	t   testing.TB
	s   *Server
	url string
	// user and pass authenticate requests when set.
	user, pass string
}

func newTServer(t testing.TB, cfg Config) *tserver {
	t.Helper()
	if cfg.DataDir == "" && cfg.DBPath == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		if err := s.CheckInvariants(context.Background()); err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return &tserver{t: t, s: s, url: hs.URL}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request; body is a string, []byte or a value encoded as JSON.
// hdr lists header name/value pairs.
func (ts *tserver) do(method, path string, body any, hdr ...string) resp {
	ts.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		js, err := json.Marshal(b)
		if err != nil {
			ts.t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, ts.url+path, rd)
	if err != nil {
		ts.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// As real clients do: without it, CouchDB (and this server) answer
	// open_revs and attachments=true as multipart. hdr may override it.
	req.Header.Set("Accept", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if ts.user != "" {
		req.SetBasicAuth(ts.user, ts.pass)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		ts.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// must sends a request and fails the test unless the status is want.
func (ts *tserver) must(want int, method, path string, body any, hdr ...string) resp {
	ts.t.Helper()
	r := ts.do(method, path, body, hdr...)
	if r.status != want {
		ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}

// wantError checks a CouchDB error answer.
func (ts *tserver) wantError(status int, name, method, path string, body any, hdr ...string) {
	ts.t.Helper()
	r := ts.do(method, path, body, hdr...)
	if r.status != status {
		ts.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	m := r.json(ts.t)
	if m["error"] != name || m["reason"] == nil {
		ts.t.Fatalf("%s %s: error body %s, want error %q with a reason", method, path, r.body, name)
	}
}

// wantReason checks a CouchDB error answer to the letter: status, error
// name and reason, as CouchDB's clients match on them.
func (ts *tserver) wantReason(status int, name, reason, method, path string, body any, hdr ...string) {
	ts.t.Helper()
	r := ts.do(method, path, body, hdr...)
	m := r.json(ts.t)
	if r.status != status || m["error"] != name || m["reason"] != reason {
		ts.t.Fatalf("%s %s: %d %s, want %d {\"error\":%q,\"reason\":%q}", method, path, r.status, r.body, status, name, reason)
	}
}

// updateSeq returns the database's update_seq.
func (ts *tserver) updateSeq(db string) float64 {
	ts.t.Helper()
	m := ts.must(200, "GET", "/"+db, nil).json(ts.t)
	return m["update_seq"].(float64)
}

// putDoc creates or updates a document and returns its new rev.
func (ts *tserver) putDoc(db, escapedID string, body any, hdr ...string) string {
	ts.t.Helper()
	m := ts.must(201, "PUT", "/"+db+"/"+escapedID, body, hdr...).json(ts.t)
	return m["rev"].(string)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// testWriter sends log lines to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
