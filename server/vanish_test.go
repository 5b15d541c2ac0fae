package server

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	gosync "sync"
	"testing"
	"time"
)

// statusLog is a slog handler keeping the status of every request and
// every error record: what a hub under faults answered and complained of.
type statusLog struct {
	mu       gosync.Mutex
	statuses []string
	errors   []string
}

func (l *statusLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *statusLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *statusLog) WithGroup(string) slog.Handler            { return l }
func (l *statusLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var method, path, status string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "method":
			method = a.Value.String()
		case "path":
			path = a.Value.String()
		case "status":
			status = a.Value.String()
		}
		return true
	})
	if r.Message == "request" {
		l.statuses = append(l.statuses, method+" "+path+" "+status)
	}
	if r.Level >= slog.LevelError {
		l.errors = append(l.errors, fmt.Sprintf("%s %v", r.Message, r.Level))
	}
	return nil
}

// fivexx lists the requests answered 5xx and the errors logged.
func (l *statusLog) fivexx() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.statuses {
		if strings.HasSuffix(s, " 500") || strings.HasSuffix(s, " 503") || strings.HasSuffix(s, " 502") {
			out = append(out, s)
		}
	}
	return append(out, l.errors...)
}

// rawRequest sends head and the first part of a body that would be
// longer, then hangs up: a client vanishing mid-request.
func rawRequest(t *testing.T, base, head string, partial string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "%s\r\nHost: x\r\n\r\n%s", head, partial)
	time.Sleep(50 * time.Millisecond)
	c.Close()
}

// A hub whose clients vanish mid-request (bodies cut short, answers and
// feeds abandoned) answers no 5xx and logs no error: the client is gone,
// nothing failed on the server.
func TestClientsVanishingMidRequest(t *testing.T) {
	var log statusLog
	ts := newTServer(t, Config{Logger: slog.New(&log)})
	ts.must(201, "PUT", "/db", nil)
	for i := 0; i < 50; i++ {
		ts.putDoc("db", fmt.Sprintf("d%02d", i), map[string]any{"i": i, "pad": strings.Repeat("x", 2000)})
	}
	bulk := `{"new_edits":false,"docs":[{"_id":"n1","_rev":"1-abc","v":1},{"_id":"n2","_rev":"1-abd"`
	rawRequest(t, ts.url, "POST /db/_bulk_docs HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 400", bulk)
	rawRequest(t, ts.url, "POST /db/_revs_diff HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 300", `{"d01":["1-x","2-y"],"d02":`)
	rawRequest(t, ts.url, "POST /db/_bulk_get HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 300", `{"docs":[{"id":"d01"},`)
	rawRequest(t, ts.url, "PUT /db/_local/ckpt HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 200", `{"session_id":"s","source_last_seq":`)
	rawRequest(t, ts.url, "PUT /db/att/a.bin HTTP/1.1\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000", strings.Repeat("y", 5000))
	rawRequest(t, ts.url, "PUT /db/multi HTTP/1.1\r\nContent-Type: multipart/related; boundary=abc\r\nContent-Length: 100000",
		"--abc\r\nContent-Type: application/json\r\n\r\n{\"_attachments\":{\"a\":{\"follows\":true,\"length\":50000,\"content_type\":\"x/y\"}}}\r\n--abc\r\n\r\n"+strings.Repeat("z", 1000))
	// Answers abandoned after their first bytes: a big _bulk_get, a
	// continuous feed, a normal feed with docs.
	for _, q := range []string{"/db/_changes?feed=continuous&include_docs=true&heartbeat=100", "/db/_changes?include_docs=true", "/db/_all_docs?include_docs=true"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", q)
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	// The hub still answers, and kept nothing of the cut writes.
	time.Sleep(300 * time.Millisecond)
	ts.must(200, "GET", "/db", nil)
	ts.wantError(404, "not_found", "GET", "/db/n1", nil)
	ts.wantError(404, "not_found", "GET", "/db/att", nil)
	ts.wantError(404, "not_found", "GET", "/db/_local/ckpt", nil)
	if bad := log.fivexx(); len(bad) > 0 {
		t.Fatalf("clients vanishing mid-request got 5xx answers or logged errors:\n  %s", strings.Join(bad, "\n  "))
	}
}

// A database deleted under live feeds ends them cleanly and at once (a
// longpoll that had sent nothing answers 200 with no rows, continuous ones
// end with their last_seq line), and its requests then get 404.
func TestDatabaseDeletedUnderLiveFeeds(t *testing.T) {
	var log statusLog
	ts := newTServer(t, Config{Logger: slog.New(&log)})
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "a", map[string]any{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type ended struct {
		q      string
		status int
		err    error
	}
	out := make(chan ended, 3)
	queries := []string{"feed=continuous&heartbeat=200&since=now", "feed=longpoll&since=now&timeout=15000", "feed=continuous&since=0"}
	for _, q := range queries {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/db/_changes?"+q, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- ended{q, 0, err}
				return
			}
			_, err = bufio.NewReader(res.Body).WriteTo(discard{})
			res.Body.Close()
			out <- ended{q, res.StatusCode, err}
		}()
	}
	time.Sleep(500 * time.Millisecond) // the feeds wait (a longpoll answers nothing before)
	ts.must(200, "DELETE", "/db", nil)
	deleted := time.Now()
	for range queries {
		select {
		case e := <-out:
			if e.status != http.StatusOK || e.err != nil || time.Since(deleted) > 5*time.Second {
				t.Errorf("%s: status %d, %v, %v after the database was deleted; want a clean end at once", e.q, e.status, e.err, time.Since(deleted))
			}
		case <-ctx.Done():
			t.Fatal("a feed did not end after its database was deleted")
		}
	}
	ts.wantError(404, "not_found", "GET", "/db/_changes", nil)
	if bad := log.fivexx(); len(bad) > 0 {
		t.Fatalf("feeds of a deleted database got 5xx answers or logged errors:\n  %s", strings.Join(bad, "\n  "))
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
