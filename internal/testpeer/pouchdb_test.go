package testpeer

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPouchDBStartsAndServes(t *testing.T) {
	s := PouchDB(t)
	u := s.CreateDB(t, "smoke")
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"db_name":"smoke"`) {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
}

// TestStartNoticesEarlyExit: a server that dies on start fails at once
// with its output, not after the minute allowed to start.
func TestStartNoticesEarlyExit(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo cannot bind the port; exit 3")
	_, err := startServer(cmd, fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)), nil)
	if err == nil || !strings.Contains(err.Error(), "exited before answering") || !strings.Contains(err.Error(), "cannot bind the port") {
		t.Fatalf("err = %v", err)
	}
}

// TestPouchDBLeavesNothingInTheTree: pouchdb-server writes config.json
// and log.txt in its working directory, a temporary one, never the
// package's folder or the repository's root.
func TestPouchDBLeavesNothingInTheTree(t *testing.T) {
	s := PouchDB(t)
	s.CreateDB(t, "leftovers")
	if _, err := os.Stat(filepath.Join(s.Dir, "config.json")); err != nil {
		t.Fatalf("pouchdb-server wrote no config.json in its directory: %v", err)
	}
	for _, dir := range []string{".", RepoRoot(t)} {
		for _, f := range []string{"config.json", "log.txt"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s in %s", f, dir)
			}
		}
	}
}

// TestPouchDBSurvivesAbortedUpload: a client that drops the connection in
// the middle of a multipart/related upload (what the fault tests' resets
// do) leaves the server serving; pouchdb-server 4.2.0 alone exits.
func TestPouchDBSurvivesAbortedUpload(t *testing.T) {
	s := PouchDB(t)
	db := s.CreateDB(t, "abort")
	u, _ := url.Parse(db)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	body := "--b\r\nContent-Type: application/json\r\n\r\n" +
		`{"_id":"d","_attachments":{"a.bin":{"follows":true,"length":100000,"content_type":"application/octet-stream"}}}` +
		"\r\n--b\r\n\r\nonly a few bytes of the 100000"
	fmt.Fprintf(conn, "PUT %s/d HTTP/1.1\r\nHost: %s\r\nContent-Type: multipart/related; boundary=\"b\"\r\nContent-Length: 200000\r\n\r\n%s", u.Path, u.Host, body)
	time.Sleep(200 * time.Millisecond)
	conn.Close()
	time.Sleep(500 * time.Millisecond)
	resp, err := http.Get(s.URL + "/")
	if err != nil {
		t.Fatalf("pouchdb-server died of an aborted upload: %v\n%s", err, s.out.String())
	}
	resp.Body.Close()
}

// TestStartNotFooledByAnotherServer: a server that took the port between
// its choice and pouchdb-server's start answers GET / too; it is not
// taken for the pouchdb-server, whose start fails (and PouchDB retries on
// another port) instead of a test talking to the wrong server.
func TestStartNotFooledByAnotherServer(t *testing.T) {
	bin := NodeBin(t, "pouchdb-server")
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/" {
			io.WriteString(w, `{"couchdb":"Welcome","uuid":"not-the-pouchdb-server"}`)
			return
		}
		http.NotFound(w, r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go other.Serve(l)
	t.Cleanup(func() { other.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	cmd := PouchDBCommand(t, bin, port)
	cmd.Dir = t.TempDir()
	dir := cmd.Dir
	s, err := startServer(cmd, fmt.Sprintf("http://127.0.0.1:%d", port), func(w []byte) bool { return OwnsPouchDB(dir, w) })
	if err == nil {
		s.Stop()
		t.Fatal("another server's answer was taken for the pouchdb-server's")
	}
	if p := PouchDB(t); p.URL == fmt.Sprintf("http://127.0.0.1:%d", port) {
		t.Fatalf("PouchDB runs on the busy port %d", port)
	}
}
