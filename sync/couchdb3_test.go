package sync_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// replayFixture answers with a recorded CouchDB 3 response from
// testdata/couchdb3 (status, headers and body byte for byte).
func replayFixture(t *testing.T, w http.ResponseWriter, req *http.Request, name string) {
	raw, err := os.ReadFile(filepath.Join(testpeer.RepoRoot(t), "testdata", "couchdb3", name))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), req)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		if k != "Content-Length" && k != "Transfer-Encoding" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// TestPullFromCouchDB3 pulls from a replayed CouchDB 3: opaque string
// sequences, multipart/mixed _bulk_get with attachments, error entries and
// stubs the target cannot resolve. The checkpoint must hold the string
// sequence exactly and the next run must send it back unchanged.
func TestPullFromCouchDB3(t *testing.T) {
	const lastSeq = `"34-g1AAAAG3eJzLYWBgYMlgTmGQT0lKzi9KdUhJMtbLSs1LLUst0k3KTcpNy8xL"`
	var mu gosync.Mutex
	local := map[string][]byte{}
	var sinces []string
	var bulkGets int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		p := req.URL.Path
		switch {
		case req.Method == "GET" && p == "/source":
			replayFixture(t, w, req, "info.http")
		case strings.HasPrefix(p, "/source/_local/") && req.Method == "GET":
			if b, ok := local[p]; ok {
				w.Header().Set("Content-Type", "application/json")
				w.Write(b)
				return
			}
			replayFixture(t, w, req, "local_404.http")
		case strings.HasPrefix(p, "/source/_local/") && req.Method == "PUT":
			var m map[string]any
			body, _ := io.ReadAll(req.Body)
			json.Unmarshal(body, &m)
			m["_rev"] = "0-1"
			local[p], _ = json.Marshal(m)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			w.Write([]byte(`{"ok":true,"id":"_local/x","rev":"0-1"}`))
		case p == "/source/_changes":
			since := req.URL.Query().Get("since")
			sinces = append(sinces, since)
			if since == "" || since == "0" {
				replayFixture(t, w, req, "changes_normal.http")
			} else {
				replayFixture(t, w, req, "changes_empty.http")
			}
		case p == "/source/_bulk_get":
			bulkGets++
			replayFixture(t, w, req, "bulk_get_mixed.http")
		default:
			t.Errorf("unexpected request %s %s", req.Method, req.URL)
			w.WriteHeader(500)
		}
	}))
	defer srv.Close()
	db := localdbtest.OpenNamed(t, "local", nil)
	opts := sync.Options{Source: synctest.Remote(t, srv.URL+"/source", nil), Target: synctest.Local(db)}
	res, err := sync.Replicate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if string(res.LastSeq) != lastSeq {
		t.Fatalf("checkpoint %s, want %s", res.LastSeq, lastSeq)
	}
	if res.Stats.DocsWritten != 2 || res.Stats.DocWriteFailures != 1 {
		t.Fatalf("stats %+v failures %v", res.Stats, res.DocFailures)
	}
	// z's stub names an attachment of a revision the target lacks; the
	// error entry of _bulk_get is reported too.
	var ids []string
	for _, f := range res.DocFailures {
		ids = append(ids, f.ID+":"+f.Err.Error())
	}
	if len(res.DocFailures) != 2 || !strings.Contains(strings.Join(ids, " "), "z:") || res.DocFailures[0].Rev == "" && res.DocFailures[1].Rev == "" {
		t.Fatalf("doc failures %q", ids)
	}
	x, err := db.Get(context.Background(), "x", localdb.GetOptions{})
	if err != nil || x.Attachments["x.txt"] == nil || x.Attachments["x.txt"].Length != 78 {
		t.Fatalf("x: %v %+v", err, x)
	}
	// Resumed from the checkpoint: nothing more to read.
	res, err = sync.Replicate(context.Background(), opts)
	if err != nil || res.Stats.DocsRead != 0 {
		t.Fatalf("resumed: %v, %+v", err, res.Stats)
	}
	mu.Lock()
	defer mu.Unlock()
	var want string
	json.Unmarshal([]byte(lastSeq), &want)
	if len(sinces) != 2 || sinces[1] != want || bulkGets != 1 {
		t.Fatalf("since params %q, bulk_gets %d", sinces, bulkGets)
	}
}
