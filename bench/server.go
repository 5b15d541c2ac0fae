package main

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
	"time"
)

// pouchServer is a server process started by the harness: pouchdb-server
// or our own.
type pouchServer struct {
	URL string
	cmd *exec.Cmd
	out *bytes.Buffer
	// profileControl is settee serve's profile control file (see
	// serve_profile.go), "" when it profiles nothing.
	profileControl string
}

// repoRoot returns the directory holding go.mod, searching up from dir.
func repoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s (run from the repository)", dir)
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startPouchServer starts an in-memory pouchdb-server on a free loopback
// port. workDir receives its config and log files.
func startPouchServer(ctx context.Context, root, workDir string) (*pouchServer, error) {
	bin := filepath.Join(root, "node_modules", ".bin", "pouchdb-server")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("pouchdb-server is not installed (run `npm ci` at the repository root): %w", err)
	}
	return startServerProc(ctx, func(port int) (*exec.Cmd, error) {
		cmd := exec.Command(bin, "--in-memory", "-o", "127.0.0.1", "-p", strconv.Itoa(port), "-n")
		cmd.Dir = workDir
		return cmd, nil
	})
}

// startSetteeServer starts our own server (package server over localdb
// files in dataDir) in a child process on a free loopback port. With a
// profileDir, the harness can profile it (serve_profile.go).
func startSetteeServer(ctx context.Context, dataDir, profileDir string) (*pouchServer, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	control := ""
	if profileDir != "" {
		if err := os.MkdirAll(profileDir, 0o755); err != nil {
			return nil, err
		}
		control = filepath.Join(profileDir, serveProfileControl)
	}
	s, err := startServerProc(ctx, func(port int) (*exec.Cmd, error) {
		return setteeCmd(context.Background(), "serve", "--dir", dataDir, "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--profile-control", control)
	})
	if s != nil {
		s.profileControl = control
	}
	return s, err
}

func startServerProc(ctx context.Context, command func(port int) (*exec.Cmd, error)) (*pouchServer, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		cmd, err := command(port)
		if err != nil {
			return nil, err
		}
		out := &bytes.Buffer{}
		cmd.Stdout = out
		cmd.Stderr = out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		s := &pouchServer{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd, out: out}
		if err := waitUp(ctx, s.URL, 60*time.Second); err != nil {
			s.Stop()
			lastErr = fmt.Errorf("%w; output:\n%s", err, out.String())
			continue
		}
		return s, nil
	}
	return nil, fmt.Errorf("server did not start: %w", lastErr)
}

func waitUp(ctx context.Context, url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not answering: %w", url, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop kills the server and its children.
func (s *pouchServer) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// RSS returns the server process's current resident set size in bytes.
func (s *pouchServer) RSS() int64 {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return procStatusBytes(s.cmd.Process.Pid, "VmRSS:")
}

// CPU returns the server process's user+system CPU time so far, in
// seconds (0 when unknown).
func (s *pouchServer) CPU() float64 {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return procCPU(s.cmd.Process.Pid)
}

// cpuFunc returns a process's CPU seconds so far.
type cpuFunc func() float64

// serverCPU is the server's CPU seconds so far: the process the harness
// started, or the one -couch-pid names (0 when unknown).
func (b *bench) serverCPU() float64 {
	if b.srv != nil {
		return b.srv.CPU()
	}
	if b.cfg.CouchPID > 0 {
		return procCPU(b.cfg.CouchPID)
	}
	return 0
}

// procCPU returns a process's own user+system CPU time so far, in seconds
// (0 when unknown). For CouchDB that is the Erlang VM (beam.smp); its
// couchjs children are not counted, and none run in these workloads.
func procCPU(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are
	// the 14th and 15th fields of the whole line, in clock ticks (100/s).
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(ut+st) / 100
}

// procStatusBytes reads a "kB" field of /proc/<pid>/status.
func procStatusBytes(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(line[len(field):])
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// httpDo sends a request and fails on a non-2xx status. The body of a
// successful answer is decoded into out when out is not nil.
func httpDo(ctx context.Context, method, url string, body io.Reader, contentType string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, redact(url), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &statusError{what: method + " " + redact(url), Status: resp.StatusCode, Body: bytes.TrimSpace(msg)}
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// statusError is a server's non-2xx answer.
type statusError struct {
	what   string
	Status int
	Body   []byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: status %d: %s", e.what, e.Status, e.Body)
}

// Name is the answer's CouchDB error name ("" when it has none).
func (e *statusError) Name() string {
	var v struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(e.Body, &v)
	return v.Error
}

// createDB creates a fresh database, deleting an existing one first.
func createDB(ctx context.Context, url string) error {
	_ = deleteDB(ctx, url)
	return httpDo(ctx, http.MethodPut, url, nil, "", nil)
}

func deleteDB(ctx context.Context, url string) error {
	return httpDo(ctx, http.MethodDelete, url, nil, "", nil)
}

// remoteInfo is the part of GET /{db} the harness checks.
type remoteInfo struct {
	DocCount    int64           `json:"doc_count"`
	DocDelCount *int64          `json:"doc_del_count"` // PouchDB leaves it out
	UpdateSeq   json.RawMessage `json:"update_seq"`
}

func dbInfo(ctx context.Context, url string) (*remoteInfo, error) {
	var info remoteInfo
	if err := httpDo(ctx, http.MethodGet, url, nil, "", &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// redact removes credentials from a URL for messages.
func redact(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		if at := strings.Index(u[i+3:], "@"); at >= 0 {
			if slash := strings.Index(u[i+3:], "/"); slash < 0 || at < slash {
				return u[:i+3] + "***@" + u[i+3+at+1:]
			}
		}
	}
	return u
}
