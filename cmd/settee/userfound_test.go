package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"syscall"
	"testing"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
)

// TestMalformedJSONArgs: every command that takes a JSON argument refuses
// a malformed one alike, exit 2, naming the line and column; a file name
// given without its @ is hinted at, and so is --password.
func TestMalformedJSONArgs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "phone.db")
	ok(t, "put", db, "shopping", `{"milk":1}`)
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"index\": }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		parts []string
	}{
		{[]string{"put", db, "doc1", "{\"a\":1,\n\"b\": x}"}, []string{"invalid JSON", "line 2, column 6"}},
		{[]string{"find", db, `{"selector":`}, []string{"invalid JSON", "line 1, column 12"}},
		{[]string{"index", "create", db, "@" + bad}, []string{"invalid JSON in " + bad, "line 2, column 12"}},
		{[]string{"resolve", db, "shopping", "--merge", "{x"}, []string{"invalid JSON", "line 1, column 2"}},
		{[]string{"put", db, "doc1", "missing.json"}, []string{"invalid JSON", "write @missing.json"}},
	} {
		failsWith(t, cli(t, nil, c.args...), exitUsage, c.parts...)
	}
	r := cli(t, nil, "pull", filepath.Join(dir, "new.db"), "http://127.0.0.1:9/db", "--password", "hunter2")
	failsWith(t, r, exitUsage, "--password-file", "SETTEE_PASSWORD")
	if strings.Contains(r.stderr, "hunter2") {
		t.Fatalf("the password is shown: %s", r.stderr)
	}
}

// TestGetDeletedConflicts: as CouchDB, get shows _deleted_conflicts (a
// conflict already resolved by deleting a version) only when asked.
func TestGetDeletedConflicts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	a, b := "1-"+strings.Repeat("a", 32), "1-"+strings.Repeat("b", 32)
	lines := `{"_id":"d","_rev":"` + a + `","_revisions":{"start":1,"ids":["` + a[2:] + `"]},"v":1}` + "\n" +
		`{"_id":"d","_rev":"` + b + `","_revisions":{"start":1,"ids":["` + b[2:] + `"]},"v":2}` + "\n"
	if r := cliIn(t, []byte(lines), "import", db); r.code != 0 {
		t.Fatal(r.stderr)
	}
	ok(t, "delete", db, "d", "--rev", a)
	var doc map[string]any
	mustJSON(t, ok(t, "get", db, "d"), &doc)
	if _, shown := doc["_deleted_conflicts"]; shown || doc["_rev"] != b {
		t.Fatalf("get shows %v", doc)
	}
	doc = nil
	mustJSON(t, ok(t, "get", db, "d", "--deleted-conflicts"), &doc)
	if dc, _ := doc["_deleted_conflicts"].([]any); len(dc) != 1 {
		t.Fatalf("get --deleted-conflicts shows %v", doc)
	}
}

// TestServeDirNames: a directory's stores whose file names CouchDB refuses
// as database names are served under the name serve FILE gives them, and
// serve says so; one whose name is taken is named as skipped, with why.
func TestServeDirNames(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"My-Notes.db", "shop list.db", "Taken.db", "taken.db"} {
		ok(t, "put", filepath.Join(dir, f), "d", `{}`)
	}
	printed, root := serveLines(t, dir)
	for _, want := range []string{"My-Notes.db is served as my-notes", "shop list.db is served as shop_list", "Taken.db is skipped"} {
		if !strings.Contains(printed, want) {
			t.Errorf("serve printed %q, without %q", printed, want)
		}
	}
	if got := strings.TrimSpace(getBody(t, root+"/_all_dbs")); got != `["my-notes","shop_list","taken"]` {
		t.Errorf("_all_dbs = %s", got)
	}
	for _, f := range []string{"My-Notes.db", "shop list.db"} {
		single, sroot := serveLines(t, filepath.Join(dir, f))
		name := dbNameOf(f)
		if !strings.Contains(single, sroot+"/"+name) {
			t.Errorf("serve %s printed %q, want it served as %s", f, single, name)
		}
		if got := getBody(t, root+"/"+name+"/d"); !strings.Contains(got, `"_id":"d"`) {
			t.Errorf("GET /%s/d = %s", name, got)
		}
	}
}

// TestServeBusyPortHint: when the port is taken, serve suggests an
// address that is free, never the busy one nor the one after it when that
// is taken too.
func TestServeBusyPortHint(t *testing.T) {
	var busy []net.Listener
	t.Cleanup(func() {
		for _, l := range busy {
			l.Close()
		}
	})
	// Two adjacent ports, both taken.
	for len(busy) < 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		if err != nil {
			l.Close()
			continue
		}
		busy = append(busy, l, next)
	}
	r := cli(t, nil, "serve", "--addr", busy[0].Addr().String(), t.TempDir())
	failsWith(t, r, exitFailure, busy[0].Addr().String()+" is in use", "such as --addr 127.0.0.1:")
	_, hint, _ := strings.Cut(r.stderr, "such as --addr ")
	hint = strings.TrimSpace(hint)
	if hint == busy[0].Addr().String() || hint == busy[1].Addr().String() {
		t.Fatalf("the hint suggests a busy address: %s", r.stderr)
	}
	l, err := net.Listen("tcp", hint)
	if err != nil {
		t.Fatalf("the suggested address %q is not free: %v", hint, err)
	}
	l.Close()
}

// TestHelpTexts: what the help texts promise, the commands do: check's
// keys, import's exit codes, balanced parentheses, demo's flag name, -v,
// the commands that create a store, and JSON in the demo's lines.
func TestHelpTexts(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")
	ok(t, "put", db, "d", `{}`)
	help := ok(t, "check", "--help")
	_, keys, _ := strings.Cut(help, "Prints {")
	keys, _, _ = strings.Cut(keys, "}")
	var rep map[string]any
	mustJSON(t, ok(t, "check", db), &rep)
	for _, k := range strings.Split(keys, ",") {
		if _, ok := rep[strings.Trim(k, "\" \n")]; !ok {
			t.Errorf("check --help promises %s, check prints %v", k, rep)
		}
	}
	if h := ok(t, "import", "--help"); strings.Contains(h, "\n  5 ") {
		t.Errorf("import --help lists exit 5 though import creates the store:\n%s", h)
	}
	for _, c := range commands() {
		h := ok(t, c.name, "--help")
		if strings.Count(h, "(") != strings.Count(h, ")") {
			t.Errorf("%s --help has unbalanced parentheses:\n%s", c.name, h)
		}
	}
	if h := ok(t, "demo", "--help"); !strings.Contains(h, "[--keep DIR]") || !strings.Contains(h, "--keep DIR\n") {
		t.Errorf("demo --help: usage and flag disagree:\n%s", h)
	}
	if v := ok(t, "-v"); !strings.HasPrefix(v, "settee ") {
		t.Errorf("settee -v printed %q", v)
	}
	failsWith(t, cli(t, nil, "get", filepath.Join(dir, "none.db"), "x"), exitNotFound, "attachment put")
	demo := ok(t, "demo")
	for _, line := range strings.Split(demo, "\n") {
		if i := strings.Index(line, "["); i >= 0 && !strings.HasPrefix(line[i:], `["`) {
			t.Errorf("the demo prints a list that is not JSON: %q", line)
		}
	}
}

// TestDoubleInterruptOneTruth: an offline sync --continuous --json given
// two SIGINTs at once (as timeout sends them: to the command, then to its
// process group) exits with the code its end event tells, or 130 with no
// end event; never one code in the event and another in the exit.
func TestDoubleInterruptOneTruth(t *testing.T) {
	down := fmt.Sprintf("http://127.0.0.1:%d/x", testpeer.FreePort(t))
	for i := range 12 { // the race is narrow: several tries
		cmd := exec.Command(settee, "sync", "--continuous", "--json", filepath.Join(t.TempDir(), "l.db"), down)
		cmd.Env = cleanEnv()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out := &testutil.SyncBuffer{}
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, "the offline state", func() bool { return strings.Contains(out.String(), `"offline"`) })
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		err := cmd.Wait()
		code := 0
		if ee, isExit := err.(*exec.ExitError); isExit {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal()) // as a shell says it
			}
		} else if err != nil {
			t.Fatal(err)
		}
		evs := events(t, out.String())
		last := evs[len(evs)-1]
		switch {
		case last["kind"] == "end" && last["exit_code"] != float64(code):
			t.Fatalf("run %d: exit %d, but the end event says %v", i, code, last["exit_code"])
		case last["kind"] != "end" && code != exitInterrupted:
			t.Fatalf("run %d: exit %d without an end event; last event %v", i, code, last)
		}
	}
}

// TestConcurrentSyncsReportTheirOwn: two syncs of one store at once each
// report what they wrote: together, each of the hub's documents once
// (both used to count every document both fetched).
func TestConcurrentSyncsReportTheirOwn(t *testing.T) {
	const n = 6000
	dir := t.TempDir()
	hub := serveBinary(t, filepath.Join(dir, "hub"), nil) + "/notes"
	req, _ := http.NewRequest(http.MethodPut, hub, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	bulkDocs(t, hub, "doc", n)
	local := filepath.Join(dir, "local.db")
	ok(t, "put", local, "mine", `{}`) // the store exists before both start
	var wg gosync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = cli(t, nil, "sync", "--json", local, hub)
		}()
	}
	wg.Wait()
	var pulled float64
	for _, r := range results {
		if r.code != 0 {
			t.Fatalf("sync: exit %d: %s", r.code, r.stderr)
		}
		for _, ev := range events(t, r.stdout) {
			if ev["kind"] == "done" && ev["replication"] == "pull" {
				pulled += ev["docs_written"].(float64)
			}
		}
	}
	if got := docCount(t, local); got != n+1 {
		t.Fatalf("the store has %d documents, want %d", got, n+1)
	}
	if pulled != n {
		t.Errorf("the two syncs report %v documents pulled, for %d written", pulled, n)
	}
}

// TestSlashInDatabaseName: a push to a URL whose path has a / in the
// database's name says how to write it (%2F), not to add the
// --create-target it was given; the URL it suggests works.
func TestSlashInDatabaseName(t *testing.T) {
	dir := t.TempDir()
	hub := serveBinary(t, filepath.Join(dir, "hub"), nil)
	local := filepath.Join(dir, "phone.db")
	ok(t, "put", local, "d", `{}`)
	r := cli(t, nil, "push", "--create-target", local, hub+"/my/db")
	failsWith(t, r, exitNotFound, "not found", "a / in a database name is written %2F: "+hub+"/my%2Fdb")
	if strings.Contains(r.stderr, "add --create-target") {
		t.Errorf("the hint asks for the flag given: %s", r.stderr)
	}
	ok(t, "push", "--create-target", local, hub+"/my%2Fdb")
	failsWith(t, cli(t, nil, "push", local, hub+"/nope"), exitNotFound, "add --create-target")
	// The URL is named once (it was three times: push URL: remote URL:
	// check: URL: GET /Bad: 400 ...).
	r = cli(t, nil, "push", local, hub+"/Bad")
	failsWith(t, r, exitUsage, "illegal_database_name")
	if n := strings.Count(r.stderr, hub); n != 1 {
		t.Errorf("the error names the URL %d times: %s", n, r.stderr)
	}
}
