package testpeer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a running pouchdb-server.
type Server struct {
	// URL is the server's root, such as http://127.0.0.1:41234.
	URL string
	// Dir is the server's working directory, a temporary one: where
	// pouchdb-server writes its config.json and log.txt.
	Dir string
	cmd *exec.Cmd
	out *bytes.Buffer
	// exited is closed once the process ended; waitErr is then Wait's
	// error.
	exited  chan struct{}
	waitErr error
}

// RepoRoot returns the repository's root, the directory holding the
// library's go.mod, searching up from the working directory (go test runs
// each package in its own folder; reliability/ has a go.mod of its own).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(b) == "github.com/settee/settee" {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testpeer: no go.mod of github.com/settee/settee above the working directory")
		}
		dir = parent
	}
}

// modulePath returns the module path a go.mod declares.
func modulePath(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// NodeBin returns the path of an npm-installed executable of the repository.
// It fails the test when the npm packages are not installed.
func NodeBin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(t), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("testpeer: %s is not installed (run `npm ci` at the repository root): %v", name, err)
	}
	return p
}

// FreePort returns a TCP port on 127.0.0.1 that was free when asked:
// another process may take it before it is used. A server that can listen
// on port 0 and say its address should (settee serve does); one that
// cannot must check the answer is its own (OwnsPouchDB). A port nobody
// listens on (an unreachable peer) is fine as it is.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// PouchDB starts an in-memory pouchdb-server on a free loopback port and
// stops it when the test ends.
func PouchDB(t testing.TB) *Server {
	t.Helper()
	bin := NodeBin(t, "pouchdb-server")
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startPouchDB(t, bin)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("testpeer: pouchdb-server did not start: %v", lastErr)
	return nil
}

func startPouchDB(t testing.TB, bin string) (*Server, error) {
	port := FreePort(t)
	cmd := PouchDBCommand(t, bin, port)
	cmd.Dir = t.TempDir() // pouchdb-server writes its config and log files in its cwd
	dir := cmd.Dir
	s, err := startServer(cmd, fmt.Sprintf("http://127.0.0.1:%d", port), func(welcome []byte) bool { return OwnsPouchDB(dir, welcome) })
	if err == nil {
		s.Dir = cmd.Dir
	}
	return s, err
}

// PouchDBCommand is the command that runs pouchdb-server (bin, from
// NodeBin) in memory on a loopback port, with keepalive.js, which lets it
// survive a client that aborts a multipart upload (a connection reset
// mid-body): pouchdb-server 4.2.0 dies of that, CouchDB serves on.
func PouchDBCommand(t testing.TB, bin string, port int) *exec.Cmd {
	keepalive := filepath.Join(RepoRoot(t), "internal", "testpeer", "keepalive.js")
	return exec.Command("node", "--require", keepalive, bin, "--in-memory", "-o", "127.0.0.1", "-p", strconv.Itoa(port), "-n")
}

// OwnsPouchDB reports whether welcome, the answer of GET / on a port, is
// that of the pouchdb-server whose working directory is dir: the uuid it
// wrote in its config.json. Between a free port's choice and the server's
// start another server may take the port; its answer is not ours.
func OwnsPouchDB(dir string, welcome []byte) bool {
	var w struct {
		UUID string `json:"uuid"`
	}
	var cfg struct {
		CouchDB struct {
			UUID string `json:"uuid"`
		} `json:"couchdb"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	return err == nil && json.Unmarshal(b, &cfg) == nil && json.Unmarshal(welcome, &w) == nil &&
		w.UUID != "" && w.UUID == cfg.CouchDB.UUID
}

// startServer starts cmd and waits until GET url/ answers 200 with a
// welcome owns accepts (nil: any), so that another server that took the
// port is not taken for it. A process that exits first fails at once with
// its output; one that never answers fails after a minute.
func startServer(cmd *exec.Cmd, url string, owns func(welcome []byte) bool) (*Server, error) {
	out := &bytes.Buffer{}
	cmd.Stdout = out
	cmd.Stderr = out
	// Pdeathsig stops the server even when the test binary dies without
	// running its cleanups (a test timeout, a SIGKILL).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{URL: url, cmd: cmd, out: out, exited: make(chan struct{})}
	// cmd.ProcessState is only set by Wait: one goroutine waits, and
	// exited tells the others.
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			welcome, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (owns == nil || owns(welcome)) {
				return s, nil
			}
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("exited before answering on %s (%v); output:\n%s", s.URL, s.waitErr, out.String())
		case <-ctx.Done():
			s.Stop()
			return nil, fmt.Errorf("not answering on %s; output:\n%s", s.URL, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop kills the server and its children and waits for them.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

// CreateDB creates a database on the server and returns its URL.
func (s *Server) CreateDB(t testing.TB, name string) string {
	t.Helper()
	u := s.URL + "/" + name
	req, _ := http.NewRequest(http.MethodPut, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("testpeer: create %s: %v", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("testpeer: create %s: status %d", name, resp.StatusCode)
	}
	return u
}
