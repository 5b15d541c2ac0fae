package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

// TestServeDirCreates: `settee serve DIR` as the README shows it (default
// flags, no --create; only the port is a free one) creates databases on
// PUT /NAME and deletes them on DELETE /NAME, and the clients that create
// their target themselves work against it: `settee push --create-target`
// and PouchDB's first sync.
func TestServeDirCreates(t *testing.T) {
	dir := t.TempDir()
	_, root := serveLines(t, dir)

	status := func(method, u string) int {
		t.Helper()
		req, _ := http.NewRequest(method, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("PUT", root+"/newdb"); got != http.StatusCreated {
		t.Fatalf("PUT /newdb = %d, want 201", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "newdb.db")); err != nil {
		t.Errorf("PUT /newdb made no newdb.db: %v", err)
	}
	putRemote(t, root+"/newdb/a", `{"x":1}`)
	if n := remoteDocCount(t, root+"/newdb"); n != 1 {
		t.Errorf("newdb has %d docs, want 1", n)
	}
	if got := status("DELETE", root+"/newdb"); got != http.StatusOK {
		t.Fatalf("DELETE /newdb = %d, want 200", got)
	}
	if got := status("GET", root+"/newdb"); got != http.StatusNotFound {
		t.Errorf("GET /newdb after DELETE = %d, want 404", got)
	}

	// The replicator's flow: the target is made by the client.
	local := filepath.Join(t.TempDir(), "local.db")
	for i := 0; i < 5; i++ {
		ok(t, "put", local, fmt.Sprintf("d%d", i), `{}`)
	}
	ok(t, "push", "--create-target", local, root+"/pushed")
	if n := remoteDocCount(t, root+"/pushed"); n != 5 {
		t.Errorf("pushed has %d docs, want 5", n)
	}

	// PouchDB's first sync creates the remote database.
	out := testpeer.NodeScript(t, 90*time.Second, "cli/pouchdb-sync-new.js", root+"/pouchnew", "20")
	var res struct {
		DocCount int `json:"doc_count"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.DocCount != 20 {
		t.Errorf("PouchDB sync into a new database: %s (%v)", out, err)
	}
	if got := getBody(t, root+"/_all_dbs"); got != `["pouchnew","pushed"]`+"\n" {
		t.Errorf("_all_dbs = %s", got)
	}
}

// TestServeCORS: the --cors-* flags turn on CouchDB's [cors] behaviour;
// without --cors-origins there is none, and its companions alone are a
// usage error.
func TestServeCORS(t *testing.T) {
	dir := t.TempDir()
	_, root := serveLines(t, "--cors-origins", "http://app.example, http://other.example", "--cors-credentials",
		"--cors-methods", "GET,PUT,POST", "--cors-max-age", "60", dir)
	req, _ := http.NewRequest("OPTIONS", root+"/", nil)
	req.Header.Set("Origin", "http://other.example")
	req.Header.Set("Access-Control-Request-Method", "PUT")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	h := res.Header
	if res.StatusCode != 204 || h.Get("Access-Control-Allow-Origin") != "http://other.example" || h.Get("Access-Control-Allow-Credentials") != "true" ||
		h.Get("Access-Control-Allow-Methods") != "GET, PUT, POST" || h.Get("Access-Control-Max-Age") != "60" || h.Get("Access-Control-Allow-Headers") != "content-type" {
		t.Errorf("preflight: %d %v", res.StatusCode, h)
	}
	_, plain := serveLines(t, t.TempDir())
	req, _ = http.NewRequest("GET", plain+"/", nil)
	req.Header.Set("Origin", "http://app.example")
	if res, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("CORS without --cors-origins: %q", got)
	}
	failsWith(t, cli(t, nil, "serve", "--cors-credentials", t.TempDir()), exitUsage, "--cors-credentials needs --cors-origins")
}
