package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type changesAnswer struct {
	Results []struct {
		Seq     int64  `json:"seq"`
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
		Changes []struct {
			Rev string `json:"rev"`
		} `json:"changes"`
		Doc map[string]any `json:"doc"`
	} `json:"results"`
	LastSeq int64 `json:"last_seq"`
}

func (ts *tserver) changes(method, path string, body any) changesAnswer {
	ts.t.Helper()
	r := ts.must(200, method, path, body)
	var a changesAnswer
	if err := json.Unmarshal(r.body, &a); err != nil {
		ts.t.Fatalf("%s: %v: %s", path, err, r.body)
	}
	return a
}

func ids(a changesAnswer) string {
	var s []string
	for _, r := range a.Results {
		s = append(s, r.ID)
	}
	return strings.Join(s, ",")
}

func TestChangesNormal(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "a", map[string]any{"type": "x", "n": 1})
	ts.putDoc("db", "b", map[string]any{"type": "y", "n": 2})
	revC := ts.putDoc("db", "c", map[string]any{"type": "x", "n": 3})
	ts.must(200, "DELETE", "/db/c?rev="+revC, nil)

	a := ts.changes("GET", "/db/_changes", nil)
	if ids(a) != "a,b,c" || a.LastSeq != 4 || !a.Results[2].Deleted {
		t.Fatalf("feed: %+v", a)
	}
	if a := ts.changes("GET", "/db/_changes?since=1&limit=1", nil); ids(a) != "b" || a.LastSeq != 2 {
		t.Fatalf("since+limit: %+v", a)
	}
	if a := ts.changes("GET", "/db/_changes?descending=true&limit=2", nil); ids(a) != "c,b" {
		t.Fatalf("descending: %+v", a)
	}
	if a := ts.changes("GET", "/db/_changes?since=now", nil); len(a.Results) != 0 || a.LastSeq != 4 {
		t.Fatalf("since=now: %+v", a)
	}
	if a := ts.changes("GET", "/db/_changes?include_docs=true&limit=1", nil); a.Results[0].Doc["n"] != 1.0 {
		t.Fatalf("include_docs: %+v", a)
	}
	if a := ts.changes("GET", `/db/_changes?filter=_doc_ids&doc_ids=["b","zz"]`, nil); ids(a) != "b" {
		t.Fatalf("_doc_ids GET: %+v", a)
	}
	if a := ts.changes("POST", `/db/_changes?filter=_doc_ids`, map[string]any{"doc_ids": []string{"a", "c"}}); ids(a) != "a,c" {
		t.Fatalf("_doc_ids POST: %+v", a)
	}
	sel := map[string]any{"selector": map[string]any{"type": "x"}}
	if a := ts.changes("POST", `/db/_changes?filter=_selector`, sel); ids(a) != "a" {
		t.Fatalf("_selector: %+v", a)
	}
	ts.putDoc("db", "_design/dd", map[string]any{})
	if a := ts.changes("GET", `/db/_changes?filter=_design`, nil); ids(a) != "_design/dd" {
		t.Fatalf("_design: %+v", a)
	}
	sel = map[string]any{"selector": map[string]any{"_deleted": true}}
	if a := ts.changes("POST", `/db/_changes?filter=_selector`, sel); ids(a) != "c" {
		t.Fatalf("_selector on tombstones: %+v", a)
	}
}

func TestChangesAllDocsStyle(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	seedConflict(t, ts)
	a := ts.changes("GET", "/db/_changes?style=all_docs", nil)
	if len(a.Results) != 1 || len(a.Results[0].Changes) != 2 || a.Results[0].Changes[0].Rev != "2-bbb" {
		t.Fatalf("all_docs: %+v", a)
	}
	a = ts.changes("GET", "/db/_changes?include_docs=true&conflicts=true", nil)
	if len(a.Results[0].Changes) != 1 || a.Results[0].Doc["_conflicts"] == nil {
		t.Fatalf("main_only with conflicts: %+v", a)
	}
}

// A longpoll feed waits for the next write (no polling: it wakes on the
// store's notification) and then answers with it.
func TestChangesLongpollWakes(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "a", map[string]any{})
	done := make(chan changesAnswer, 1)
	go func() {
		res, err := http.Get(ts.url + "/db/_changes?feed=longpoll&since=1&timeout=30000")
		var a changesAnswer
		if err == nil {
			json.NewDecoder(res.Body).Decode(&a)
			res.Body.Close()
		}
		done <- a
	}()
	// The request is in flight or about to be; either way the answer
	// must be b.
	ts.putDoc("db", "b", map[string]any{})
	select {
	case a := <-done:
		if ids(a) != "b" || a.LastSeq != 2 {
			t.Fatalf("longpoll: %+v", a)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("longpoll did not wake")
	}
	// A timeout ends an empty longpoll with last_seq.
	a := ts.changes("GET", "/db/_changes?feed=longpoll&since=2&timeout=10", nil)
	if len(a.Results) != 0 || a.LastSeq != 2 {
		t.Fatalf("longpoll timeout: %+v", a)
	}
	// A filtered longpoll ignores changes its filter drops.
	done2 := make(chan changesAnswer, 1)
	go func() {
		res, err := http.Get(ts.url + `/db/_changes?feed=longpoll&since=2&timeout=30000&filter=_doc_ids&doc_ids=["want"]`)
		var a changesAnswer
		if err == nil {
			json.NewDecoder(res.Body).Decode(&a)
			res.Body.Close()
		}
		done2 <- a
	}()
	ts.putDoc("db", "other", map[string]any{})
	ts.putDoc("db", "want", map[string]any{})
	select {
	case a := <-done2:
		if ids(a) != "want" || a.LastSeq != 4 {
			t.Fatalf("filtered longpoll: %+v", a)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("filtered longpoll did not wake")
	}
}

func TestChangesContinuous(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "a", map[string]any{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/db/_changes?feed=continuous&heartbeat=50", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	next := func() string {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("feed ended: %v", sc.Err())
		}
		return sc.Text()
	}
	if l := next(); !strings.Contains(l, `"id":"a"`) {
		t.Fatalf("first row %q", l)
	}
	// Heartbeats are empty lines; then the next write arrives.
	if l := next(); l != "" {
		t.Fatalf("heartbeat %q", l)
	}
	ts.putDoc("db", "b", map[string]any{})
	for {
		l := next()
		if l == "" {
			continue
		}
		if !strings.Contains(l, `"id":"b"`) || !strings.Contains(l, `"seq":2`) {
			t.Fatalf("second row %q", l)
		}
		break
	}
	cancel()

	// Without heartbeat, timeout ends the feed with last_seq.
	r := ts.must(200, "GET", "/db/_changes?feed=continuous&timeout=20&since=1", nil)
	lines := strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":"b"`) || lines[1] != `{"last_seq":2,"pending":0}` {
		t.Fatalf("continuous with timeout: %q", r.body)
	}
	// limit ends it too.
	r = ts.must(200, "GET", "/db/_changes?feed=continuous&limit=1&heartbeat=1000", nil)
	lines = strings.Split(strings.TrimSpace(string(r.body)), "\n")
	if len(lines) != 2 || lines[1] != `{"last_seq":1,"pending":1}` {
		t.Fatalf("continuous with limit: %q", r.body)
	}
}

// Heartbeats of a longpoll feed are newlines before and inside the JSON,
// which stays valid.
func TestChangesLongpollHeartbeat(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/db/_changes?feed=longpoll&since=0&heartbeat=5", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	if c, err := br.ReadByte(); err != nil || c != '\n' {
		t.Fatalf("first byte %q, %v", c, err)
	}
	ts.putDoc("db", "x", map[string]any{})
	var a changesAnswer
	if err := json.NewDecoder(br).Decode(&a); err != nil {
		t.Fatal(err)
	}
	if ids(a) != "x" || a.LastSeq != 1 {
		t.Fatalf("longpoll with heartbeat: %+v", a)
	}
}

// Deleting a database ends the feeds that follow it.
func TestDeleteDBEndsFeeds(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/db/_changes?feed=continuous&heartbeat=10000", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ts.must(200, "DELETE", "/db", nil)
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, res.Body)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("feed still open after its database was deleted")
	}
	ts.wantError(404, "not_found", "GET", "/db/_changes", nil)
}

// TestChangesFilterErrorHeld checks that a filter failing on a document
// is answered as an error when the rows before it fit in what CouchDB
// holds before its answer starts (chunked_response_buffer), and cuts the
// connection when they did not (CouchDB's http_abort): never a feed that
// ends short as if whole.
func TestChangesFilterErrorHeld(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.must(201, "PUT", "/db/_design/f", map[string]any{
		"filters": map[string]string{"f": "function (doc, req) { if (doc.bad) { throw new Error('bad doc'); } return true; }"},
	})
	get := func() (int, []byte, error) {
		res, err := http.Get(ts.url + "/db/_changes?filter=f/f")
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, b, err
	}
	// A few rows (about 80 bytes each), then the failing document.
	for i := range 3 {
		ts.must(201, "PUT", fmt.Sprintf("/db/ok%02d", i), map[string]any{})
	}
	rev := ts.must(201, "PUT", "/db/bad1", map[string]any{"bad": true}).json(t)["rev"].(string)
	code, body, err := get()
	if err != nil || code != http.StatusInternalServerError || !strings.Contains(string(body), `"error":"Error"`) {
		t.Fatalf("few rows then a failing filter: %d %s %v, want 500 with the error", code, body, err)
	}
	// Past the held bytes, the connection is cut.
	ts.must(200, "DELETE", "/db/bad1?rev="+rev, nil)
	for i := 3; i < 40; i++ {
		ts.must(201, "PUT", fmt.Sprintf("/db/ok%02d", i), map[string]any{})
	}
	ts.must(201, "PUT", "/db/bad2", map[string]any{"bad": true})
	code, body, err = get()
	if err == nil {
		t.Fatalf("many rows then a failing filter: %d %s, want the connection cut", code, body)
	}
	if code != http.StatusOK || !strings.HasPrefix(string(body), `{"results":[`) {
		t.Errorf("many rows then a failing filter: %d %.40s, want 200 and the rows before it", code, body)
	}
}
