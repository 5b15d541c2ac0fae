package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveOnce runs a server over dir on a free loopback port until stop is
// called.
func serveOnce(t *testing.T, dir string) (url string, stop func()) {
	t.Helper()
	s, err := New(Config{DataDir: dir, Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	return "http://" + l.Addr().String(), func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func send(t *testing.T, method, u, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Documents, local checkpoints, sequences and the uuid survive a restart
// over the same data directory; a client resumes the feed where it was.
func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	u, stop := serveOnce(t, dir)
	send(t, "PUT", u+"/db", "")
	send(t, "PUT", u+"/db/a", `{"n":1}`)
	send(t, "PUT", u+"/db/_local/cp", `{"last_seq":1}`)
	_, root1 := get(t, u+"/")
	_, feed := get(t, u+"/db/_changes")
	var a struct {
		LastSeq int64 `json:"last_seq"`
	}
	json.Unmarshal([]byte(feed), &a)
	stop()

	u, stop = serveOnce(t, dir)
	defer stop()
	_, root2 := get(t, u+"/")
	var r1, r2 map[string]any
	json.Unmarshal([]byte(root1), &r1)
	json.Unmarshal([]byte(root2), &r2)
	if r1["uuid"] != r2["uuid"] {
		t.Fatalf("uuid changed: %v -> %v", r1["uuid"], r2["uuid"])
	}
	if st, body := get(t, u+"/db/_local/cp"); st != 200 || !strings.Contains(body, `"last_seq":1`) {
		t.Fatalf("checkpoint after restart: %d %s", st, body)
	}
	send(t, "PUT", u+"/db/b", `{"n":2}`)
	st, body := get(t, u+"/db/_changes?since="+json.Number(jsonInt(a.LastSeq)).String())
	if st != 200 || !strings.Contains(body, `"id":"b"`) || strings.Contains(body, `"id":"a"`) {
		t.Fatalf("resumed feed: %d %s", st, body)
	}
	if st, body := get(t, u+"/_all_dbs"); st != 200 || strings.TrimSpace(body) != `["db"]` {
		t.Fatalf("_all_dbs after restart: %s", body)
	}
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
