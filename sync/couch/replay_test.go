package couch

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	gosync "sync"
	"testing"
	"time"
)

// recorded is a request the replay server saw.
type recorded struct {
	Method, URI, Path string
	Header            http.Header
	Body              []byte
}

// replay is an httptest server that answers with the raw bytes of recorded
// CouchDB 3 responses (testdata/couchdb3/*.http), so chunking, truncation
// and headers reach the client exactly as CouchDB sent them.
type replay struct {
	*httptest.Server
	mu     gosync.Mutex
	routes map[string][]string // "METHOD /path" -> fixtures, served in turn (the last one repeats)
	funcs  map[string]http.HandlerFunc
	reqs   []recorded
}

func newReplay(t *testing.T) *replay {
	r := &replay{routes: map[string][]string{}, funcs: map[string]http.HandlerFunc{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

// on answers "METHOD /path" with the fixtures in turn.
func (r *replay) on(route string, fixtures ...string) {
	r.mu.Lock()
	r.routes[route] = fixtures
	r.mu.Unlock()
}

// handle answers "METHOD /path" with a handler.
func (r *replay) handle(route string, h http.HandlerFunc) {
	r.mu.Lock()
	r.funcs[route] = h
	r.mu.Unlock()
}

func (r *replay) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

func (r *replay) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	route := req.Method + " " + req.URL.EscapedPath()
	r.mu.Lock()
	r.reqs = append(r.reqs, recorded{Method: req.Method, URI: req.RequestURI, Path: req.URL.EscapedPath(), Header: req.Header.Clone(), Body: body})
	fixtures := r.routes[route]
	var name string
	if len(fixtures) > 0 {
		name = fixtures[0]
		if len(fixtures) > 1 {
			r.routes[route] = fixtures[1:]
		}
	}
	h := r.funcs[route]
	r.mu.Unlock()
	if h != nil {
		h(w, req)
		return
	}
	if name == "" {
		http.Error(w, `{"error":"not_found","reason":"no fixture for `+route+`"}`, http.StatusNotFound)
		return
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "couchdb3", name))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	// the connection is closed after each answer: say so, so the client
	// does not try to reuse it
	if i := indexCRLF(raw); i > 0 {
		raw = append(append(append([]byte{}, raw[:i+2]...), "Connection: close\r\n"...), raw[i+2:]...)
	}
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = buf.Write(raw)
	_ = buf.Flush()
}

// hang answers nothing until the test ends.
func hang(done <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-done:
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// readFixture parses a recorded response (for handlers that adapt one).
func readFixture(t *testing.T, name string) *http.Response {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "couchdb3", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	resp, err := http.ReadResponse(bufio.NewReader(f), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func indexCRLF(b []byte) int {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return -1
}
