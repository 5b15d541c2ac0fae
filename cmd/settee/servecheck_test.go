package main

import (
	"bufio"
	"database/sql"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	_ "modernc.org/sqlite"
)

// serveLines starts `settee serve` and returns what it printed up to its
// "serving" line, and its root URL.
func serveLines(t *testing.T, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(settee, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = cleanEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	var printed strings.Builder
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, out)
			return printed.String(), m[1]
		}
	}
	t.Fatalf("serve printed no serving line: %q", printed.String())
	return "", ""
}

func getBody(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestServeDir: a directory serves its *.db and *.sqlite stores and says
// what it found (issue 14, item 2).
func TestServeDir(t *testing.T) {
	dir := t.TempDir()
	ok(t, "put", filepath.Join(dir, "alice.db"), "a", `{}`)
	ok(t, "put", filepath.Join(dir, "bob.sqlite"), "b", `{}`)
	printed, root := serveLines(t, dir)
	if !strings.Contains(printed, "2 database(s): alice, bob") {
		t.Errorf("serve printed %q", printed)
	}
	if got := getBody(t, root+"/_all_dbs"); strings.TrimSpace(got) != `["alice","bob"]` {
		t.Errorf("_all_dbs = %s", got)
	}
	if got := getBody(t, root+"/bob/b"); !strings.Contains(got, `"_id":"b"`) {
		t.Errorf("GET /bob/b = %s", got)
	}
	printed, _ = serveLines(t, t.TempDir())
	if !strings.Contains(printed, "no databases (*.db, *.sqlite) yet") {
		t.Errorf("serve of an empty directory printed %q", printed)
	}
}

// TestServeFailsFast: a setup that cannot work exits non-zero with one
// line, before saying it serves, and creates nothing (items 2 and 3).
func TestServeFailsFast(t *testing.T) {
	dir := t.TempDir()
	foreign := foreignSQLite(t, dir)
	store := filepath.Join(dir, "ok.db")
	ok(t, "put", store, "a", `{}`)
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing directory", []string{"/nonexistent/x.db"}, exitNotFound, "directory /nonexistent does not exist"},
		{"missing directory with --create", []string{"--create", "/nonexistent/x.db"}, exitNotFound, "directory /nonexistent does not exist"},
		{"missing store", []string{filepath.Join(dir, "typo.db")}, exitNotFound, "--create makes an empty one"},
		{"missing extensionless path", []string{filepath.Join(dir, "data")}, exitNotFound, "does not exist: give a directory"},
		{"missing TLS certificate", []string{"--tls-cert", filepath.Join(dir, "nope.pem"), "--tls-key", filepath.Join(dir, "nope.key"), store}, exitUsage, "TLS certificate: open " + filepath.Join(dir, "nope.pem")},
		{"another program's file", []string{foreign}, exitFailure, "not a Settee store"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, nil, append([]string{"serve", "--addr", "127.0.0.1:0"}, c.args...)...)
			failsWith(t, r, c.code, c.msg)
			if strings.Contains(r.stdout, "serving") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("stdout %q, stderr %q", r.stdout, r.stderr)
			}
		})
	}
	for _, p := range []string{filepath.Join(dir, "typo.db"), filepath.Join(dir, "data")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

// TestStoreOwnership: read-only commands neither convert another
// program's SQLite file nor initialise an empty file; writes create a
// store (item 4). Path errors are said once (item 5).
func TestStoreOwnership(t *testing.T) {
	dir := t.TempDir()
	foreign := foreignSQLite(t, dir)
	before, _ := os.ReadFile(foreign)
	for _, cmd := range [][]string{{"info", foreign}, {"put", foreign, "x", "{}"}, {"changes", foreign}} {
		failsWith(t, cli(t, nil, cmd...), exitFailure, "another program's SQLite database", "not a Settee store")
	}
	if after, _ := os.ReadFile(foreign); string(after) != string(before) {
		t.Error("another program's file changed")
	}
	if _, err := os.Stat(foreign + "-wal"); err == nil {
		t.Error("a -wal file was made beside another program's file")
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	failsWith(t, cli(t, nil, "info", empty), exitNotFound, "empty file")
	if st, _ := os.Stat(empty); st.Size() != 0 {
		t.Error("info initialised an empty file")
	}
	ok(t, "put", empty, "x", `{}`) // a write asks for a store
	r := cli(t, nil, "info", "/nonexistent/dir/x.db")
	failsWith(t, r, exitNotFound, "/nonexistent/dir/x.db: directory /nonexistent/dir does not exist")
	r = cli(t, nil, "put", "/nonexistent/dir/x.db", "x", "{}")
	failsWith(t, r, exitNotFound, "/nonexistent/dir/x.db: directory /nonexistent/dir does not exist")
	if strings.Count(r.stderr, "/nonexistent/dir/x.db") != 1 {
		t.Errorf("path said more than once: %q", r.stderr)
	}
	failsWith(t, cli(t, nil, "put", dir, "x", "{}"), exitFailure, dir+": is a directory")
}

// TestBadArguments: arguments that cannot work exit 2 before anything
// is tried (issue 14, item 9).
func TestBadArguments(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "s.db")
	ok(t, "put", store, "a", `{}`)
	for _, args := range [][]string{
		{"pull", filepath.Join(dir, "x.db"), "http://127.0.0.1:99999/x"},
		{"get", store, "a", "--rev", "nine-x"},
		{"delete", store, "a", "--rev", "9"},
		{"put", store, "a", "{}", "--rev", "nope"},
		{"resolve", store, "a", "--winner", "1-" + strings.Repeat("z", 32)},
		{"pull", "--retries", "-1", filepath.Join(dir, "x.db"), "http://127.0.0.1:5984/x"},
		{"pull", "--doc-ids", "", filepath.Join(dir, "x.db"), "http://127.0.0.1:5984/x"},
		{"serve", "--addr", "127.0.0.1:99999", store},
	} {
		r := cli(t, nil, args...)
		if r.code != exitUsage || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("settee %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Error("a refused pull created its store")
	}
}

// foreignSQLite makes another program's SQLite file in dir: a table of its
// own, no Settee schema.
func foreignSQLite(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "other-app.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("CREATE TABLE notes(x)"); err != nil {
		t.Fatal(err)
	}
	return path
}
