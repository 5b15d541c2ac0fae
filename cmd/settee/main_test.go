package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/internal/testutil"
)

// settee is the binary under test, built once by TestMain.
var settee string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "settee-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	settee = filepath.Join(dir, "settee")
	args := []string{"build", "-ldflags", "-X main.version=test", "-o", settee}
	if os.Getenv("SETTEE_TEST_RACE_BINARY") != "" {
		// Exercise the command and the libraries under it with the race
		// detector (slower to build, so not the default).
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build settee:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary with args (and env additions) and waits, bounded.
func cli(t testing.TB, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, settee, args...)
	cmd.Env = append(cleanEnv(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("settee %v: %v", args, err)
		}
		r.code = ee.ExitCode()
	}
	return r
}

// ok runs the binary and fails the test unless it exits 0.
func ok(t testing.TB, args ...string) string {
	t.Helper()
	r := cli(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("settee %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// cleanEnv is the test process's environment without Settee's variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SETTEE_") {
			env = append(env, kv)
		}
	}
	return env
}

// oneLineRE is the start of an error line: "settee: " or, for a flag
// error, "settee CMD: ".
var oneLineRE = regexp.MustCompile(`^settee( [a-z-]+)?: `)

// failsWith checks an exit code and a one-line message on stderr that
// contains every part, and that the stderr never shows a secret.
func failsWith(t testing.TB, r result, code int, parts ...string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.code, code, r.stdout, r.stderr)
	}
	msg := strings.TrimRight(r.stderr, "\n")
	if strings.Count(msg, "\n") != 0 || !oneLineRE.MatchString(msg) {
		t.Fatalf("want one line \"settee: ...\" (or \"settee CMD: ...\" for a flag error) on stderr, got %q", r.stderr)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("stderr %q lacks %q", msg, p)
		}
	}
}

// serveBinary starts `settee serve` on a port the system picks and returns
// its root URL (http://, even with --tls-cert), read from its serving line: no other server can take the
// port between its choice and the start, as with a port chosen first.
// extra are flags and env additions are given in env.
func serveBinary(t testing.TB, target string, env []string, extra ...string) string {
	t.Helper()
	if filepath.Ext(target) == "" {
		if err := os.MkdirAll(target, 0o755); err != nil { // a directory of stores
			t.Fatal(err)
		}
	}
	args := append([]string{"serve", "--create", "--addr", "127.0.0.1:0"}, extra...)
	args = append(args, target)
	cmd := exec.Command(settee, args...)
	cmd.Env = append(cleanEnv(), env...)
	out := &testutil.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	for i := 0; i < 200; i++ {
		if m := servingRE.FindStringSubmatch(out.String()); m != nil {
			return "http://" + m[2] // as before: the caller makes it https
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("settee serve printed no serving line; output:\n%s", out.String())
	return ""
}

// servingRE finds the root URL (1) and its host:port (2) in serve's
// serving line.
var servingRE = regexp.MustCompile(`serving .* at (https?://(127\.0\.0\.1:[0-9]+))/`)

// bulkDocs writes n small documents to a database URL with _bulk_docs,
// in batches, with ids prefix-00000...
func bulkDocs(t testing.TB, dbURL, prefix string, n int) {
	t.Helper()
	const batch = 2000
	for start := 0; start < n; start += batch {
		var docs []map[string]any
		for i := start; i < n && i < start+batch; i++ {
			docs = append(docs, map[string]any{"_id": fmt.Sprintf("%s-%05d", prefix, i), "n": i, "text": "hello"})
		}
		body, _ := json.Marshal(map[string]any{"docs": docs})
		resp, err := http.Post(dbURL+"/_bulk_docs", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			t.Fatalf("_bulk_docs: %d %s", resp.StatusCode, b)
		}
	}
}

// docCount returns a local store's doc_count via `settee info`.
func docCount(t testing.TB, path string) int64 {
	t.Helper()
	var info struct {
		DocCount int64 `json:"doc_count"`
	}
	if err := json.Unmarshal([]byte(ok(t, "info", path)), &info); err != nil {
		t.Fatal(err)
	}
	return info.DocCount
}

// remoteDocCount returns a remote database's doc_count.
func remoteDocCount(t testing.TB, dbURL string) int64 {
	t.Helper()
	resp, err := http.Get(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		DocCount int64 `json:"doc_count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.DocCount
}

// events parses --json output: every line must be a JSON object.
func events(t testing.TB, stdout string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("--json line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}
