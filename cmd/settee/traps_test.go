package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/server/servertest"
)

// These tests type the commands as a user does, with the defaults: no
// --create, no extra flags beyond the one under test.

// TestSyncCreateTarget: sync --create-target creates what is missing on
// either side: the remote database and the local store.
func TestSyncCreateTarget(t *testing.T) {
	srv := servertest.Start(t, nil)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	ok(t, "put", a, `{"_id":"x","v":1}`)
	failsWith(t, cli(t, nil, "sync", a, srv.URL+"/notes"), exitNotFound, "not found", "--create-target")
	ok(t, "sync", "--create-target", a, srv.URL+"/notes")
	if n := remoteDocCount(t, srv.URL+"/notes"); n != 1 {
		t.Fatalf("the remote a sync created has %d docs", n)
	}
	// A new local store and a new remote database at once.
	b := filepath.Join(dir, "b.db")
	ok(t, "sync", b, srv.URL+"/notes")
	ok(t, "sync", "--create-target", b, srv.URL+"/other")
	if n := remoteDocCount(t, srv.URL+"/other"); n != 1 || docCount(t, b) != 1 {
		t.Fatalf("other has %d docs, b.db %d", n, docCount(t, b))
	}
}

// TestPendingAfterCreateTarget: after push --create-target, pending is
// empty and the next plain push checks nothing again: they share the
// push's checkpoint.
func TestPendingAfterCreateTarget(t *testing.T) {
	srv := servertest.Start(t, nil)
	a := filepath.Join(t.TempDir(), "a.db")
	for i := range 5 {
		ok(t, "put", a, fmt.Sprintf(`{"_id":"d%d"}`, i))
	}
	u := srv.URL + "/notes"
	ok(t, "push", "--create-target", a, u)
	if out := ok(t, "pending", a, u); out != "" {
		t.Fatalf("pending after push --create-target: %q", out)
	}
	var end map[string]any
	for _, ev := range events(t, ok(t, "push", "--json", a, u)) {
		if ev["kind"] == "done" {
			end = ev
		}
	}
	if end == nil || end["missing_checked"] != 0.0 || end["docs_written"] != 0.0 {
		t.Fatalf("plain push after push --create-target: %v", end)
	}
	ok(t, "put", a, `{"_id":"late"}`)
	if out := ok(t, "pending", a, u); out != "late\n" {
		t.Fatalf("pending: %q", out)
	}
	// pending needs no credentials: the URL's user and $SETTEE_USER are
	// only names.
	if r := cli(t, []string{"SETTEE_USER=alice"}, "pending", a, strings.Replace(u, "http://", "http://bob@", 1)); r.code != 0 || r.stdout != "late\n" {
		t.Fatalf("pending with a user and no password: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestNoStoreRefused: every command that reads or pushes a local store
// refuses a path with no store, with exit 5 and a next step, and creates
// nothing.
func TestNoStoreRefused(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.db")
	u := "http://127.0.0.1:1/db"
	for _, args := range [][]string{
		{"get", typo, "x"}, {"info", typo}, {"changes", typo}, {"conflicts", typo},
		{"find", typo, `{"selector":{}}`}, {"index", "list", typo}, {"delete", typo, "x"},
		{"resolve", typo, "x"}, {"purge", typo, "x"}, {"expire", typo, "x"}, {"compact", typo},
		{"export", typo}, {"check", typo}, {"attachment", "get", typo, "x", "a"},
		{"pending", typo, u}, {"push", typo, u}, {"fetch-attachment", "--evict", typo, "x", "a"},
		{"clone", typo, filepath.Join(dir, "new.db")},
	} {
		r := cli(t, nil, args...)
		if r.code != exitNotFound || !strings.Contains(r.stderr, "no local store at "+typo) && args[0] != "clone" {
			t.Errorf("settee %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Fatalf("settee %s created %s", strings.Join(args, " "), typo)
		}
	}
	if r := cli(t, nil, "get", typo, "x"); !strings.Contains(r.stderr, "pull, sync") {
		t.Errorf("no next step in %q", r.stderr)
	}
}

// TestOneShotOfflineMessage: a one-shot replication to an unreachable
// server says how often it retries, never "until Ctrl-C".
func TestOneShotOfflineMessage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.db")
	u := fmt.Sprintf("http://127.0.0.1:%d/x", closedPort(t))
	r := cli(t, nil, "pull", "--timeout", "2s", p, u)
	failsWith(t, r, exitTransient, "cannot reach", "connection refused")
	if !strings.Contains(r.stdout, "retrying up to 3 times before giving up") || strings.Contains(r.stdout, "Ctrl-C") {
		t.Errorf("one-shot offline line: %q", r.stdout)
	}
	r = cli(t, nil, "pull", "--retries", "0", p, u)
	failsWith(t, r, exitTransient, "cannot reach")
	if r.stdout != "" {
		t.Errorf("--retries 0 printed %q", r.stdout)
	}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// TestResolveNoConflict: resolving a document without conflicts is a
// no-op that says so (exit 0), unless a merge body would be lost (exit 1)
// or --winner names a revision that is not a leaf (exit 5).
func TestResolveNoConflict(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.db")
	var put okResult
	mustJSON(t, ok(t, "put", a, `{"_id":"x"}`), &put)
	r := cli(t, nil, "resolve", a, "x")
	if r.code != 0 || !strings.Contains(r.stderr, "no conflicts: nothing to resolve") || !strings.Contains(r.stdout, put.Rev) {
		t.Fatalf("resolve without conflicts: %d %q %q", r.code, r.stdout, r.stderr)
	}
	failsWith(t, cli(t, nil, "resolve", a, "x", "--merge", `{"a":1}`), exitFailure, "no conflicts", "put --update")
	failsWith(t, cli(t, nil, "resolve", a, "x", "--winner", "1-0123456789abcdef0123456789abcdef"), exitNotFound, "not a leaf")
}

// TestHelpTrue: each command's help shows only the flags and exit codes
// that apply to it, and flag errors read as the help spells flags.
func TestHelpTrue(t *testing.T) {
	has := func(cmd, s string, want bool) {
		t.Helper()
		if got := strings.Contains(ok(t, cmd, "--help"), s); got != want {
			t.Errorf("settee %s --help contains %q: %v, want %v", cmd, s, got, want)
		}
	}
	has("pull", "--attachments MODE", true)
	has("sync", "--attachments MODE", true)
	has("push", "--attachments", false)
	has("push", "--filter", true) // the local store runs it (localdb/filter)
	has("pull", "--create-target", false)
	for _, f := range []string{"--timeout", "--user", "--password-file", "--retries", "--attachments", "--since"} {
		has("pending", f, false)
	}
	has("serve", "  --create\n", true)
	has("get", "\n  3 ", false)
	has("get", "\n  5 ", true)
	has("put", "\n  6 ", true)
	has("pull", "\n  130 ", true)
	has("clone", "summary", false)
	has("get", "\nOutput:\n  Results are JSON", true)
	has("export", "\nOutput:", false) // NDJSON, whatever stdout is
	has("pending", "\nOutput:", false)
	r := cli(t, nil, "pull", "a.db", "http://127.0.0.1:5984/x", "--timeout", "abc")
	if r.code != exitUsage || r.stderr != `settee pull: invalid value "abc" for flag --timeout: parse error (expected a duration such as 30s, 2m or 1h30m) (see --help)`+"\n" {
		t.Errorf("flag error: %d %q", r.code, r.stderr)
	}
	failsWith(t, cli(t, nil, "get", "--nope", "a.db", "x"), exitUsage)
}

// TestServeBusyPort: serve on a port in use says what to do.
func TestServeBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	r := cli(t, nil, "serve", "--addr", l.Addr().String(), dir)
	failsWith(t, r, exitFailure, l.Addr().String()+" is in use", "another server", "--addr")
}

// TestOutputRule: results are compact on a pipe, indented with --pretty,
// compact with --json, the same way on every command.
func TestOutputRule(t *testing.T) {
	a := filepath.Join(t.TempDir(), "a.db")
	for _, args := range [][]string{{"put", "--update", a, `{"_id":"x","a":[1,2]}`}, {"get", a, "x"}, {"info", a}, {"conflicts", a}} {
		out := ok(t, args...)
		if strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("settee %s on a pipe is not one line: %q", args[0], out)
		}
		if args[0] == "conflicts" {
			continue // nothing to print
		}
		pretty := ok(t, append(args, "--pretty")...)
		if !strings.Contains(pretty, "\n  ") {
			t.Errorf("settee %s --pretty is not indented: %q", args[0], pretty)
		}
		if j := ok(t, append(args, "--json")...); j != out && args[0] != "put" {
			t.Errorf("settee %s --json %q differs from the piped %q", args[0], j, out)
		}
	}
	failsWith(t, cli(t, nil, "get", a, "x", "--json", "--pretty"), exitUsage, "exclude")
}
