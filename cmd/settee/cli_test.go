package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

func TestHelpAndVersion(t *testing.T) {
	out := ok(t, "--help")
	for _, c := range commands() {
		if !strings.Contains(out, "  "+c.name+" ") {
			t.Errorf("settee --help does not list %s", c.name)
		}
		help := ok(t, c.name, "--help")
		if !strings.HasPrefix(help, "Usage: settee "+c.name) || !strings.Contains(help, "Examples:") {
			t.Errorf("settee %s --help:\n%s", c.name, help)
		}
	}
	if out := ok(t, "help", "pull"); !strings.Contains(out, "--query-param") || !strings.Contains(out, "130") {
		t.Errorf("settee help pull lacks flags or exit codes:\n%s", out)
	}
	if out := ok(t, "version"); !strings.HasPrefix(out, "settee test (") {
		t.Errorf("settee version = %q", out)
	}
	failsWith(t, cli(t, nil, "frobnicate"), exitUsage, "unknown command")
	failsWith(t, cli(t, nil, "get", "only-one-arg.db"), exitUsage, "usage: settee get")
	failsWith(t, cli(t, nil, "pull", "--bogus", "a.db", "http://x/db"), exitUsage, "bogus")
	failsWith(t, cli(t, nil, "pull", "a.db", "ftp://x/db"), exitUsage, "not an http")
}

func TestLocalStore(t *testing.T) {
	db := filepath.Join(t.TempDir(), "notes.db")
	failsWith(t, cli(t, nil, "info", db), exitNotFound, "no local store")

	var put okResult
	mustJSON(t, ok(t, "put", db, "list", `{"items":["milk"]}`), &put)
	if put.ID != "list" || !strings.HasPrefix(put.Rev, "1-") {
		t.Fatalf("put = %+v", put)
	}
	// Editing without naming the revision is a conflict, as in CouchDB.
	failsWith(t, cli(t, nil, "put", db, "list", `{"items":["tea"]}`), exitConflict, "conflict")
	mustJSON(t, ok(t, "put", db, "list", "--rev", put.Rev, `{"items":["milk","eggs"]}`), &put)
	mustJSON(t, ok(t, "put", db, "list", "--update", `{"items":["milk","eggs","tea"]}`), &put)
	if !strings.HasPrefix(put.Rev, "3-") {
		t.Fatalf("put --update rev = %s", put.Rev)
	}
	ok(t, "put", db, `{"_id":"todo","done":false}`)
	ok(t, "put", db, "_local/mine", `{"x":1}`)

	var doc map[string]any
	mustJSON(t, ok(t, "get", db, "list"), &doc)
	if doc["_rev"] != put.Rev || len(doc["items"].([]any)) != 3 {
		t.Fatalf("get list = %v", doc)
	}
	mustJSON(t, ok(t, "get", db, "_local/mine"), &doc)
	if doc["x"] != 1.0 {
		t.Fatalf("get _local/mine = %v", doc)
	}
	failsWith(t, cli(t, nil, "get", db, "nope"), exitNotFound, "not_found")

	var info map[string]any
	mustJSON(t, ok(t, "info", db), &info)
	if info["doc_count"] != 2.0 || info["uuid"] == "" {
		t.Fatalf("info = %v", info)
	}
	if sz, _ := info["sizes"].(map[string]any); sz == nil || sz["file"].(float64) <= 0 || sz["external"].(float64) <= 0 ||
		info["counts"].(map[string]any)["revisions"].(float64) < 2 || info["bytes"].(map[string]any)["bodies"].(float64) <= 0 {
		t.Fatalf("info sizes = %v", info)
	}

	var del okResult
	mustJSON(t, ok(t, "delete", db, "todo"), &del)
	if !strings.HasPrefix(del.Rev, "2-") {
		t.Fatalf("delete = %+v", del)
	}
	failsWith(t, cli(t, nil, "get", db, "todo"), exitNotFound)
	ok(t, "put", db, "_local/cp", `{"seq":1}`)
	if out := ok(t, "delete", db, "_local/cp"); strings.TrimSpace(out) != `{"ok":true,"id":"_local/cp","rev":"0-0"}` {
		t.Errorf("delete of a _local doc = %s", out) // CouchDB's answer
	}

	rows := strings.Split(strings.TrimSpace(ok(t, "changes", db, "--include-docs")), "\n")
	if len(rows) != 3 || !strings.Contains(rows[2], `"last_seq"`) {
		t.Fatalf("changes:\n%s", strings.Join(rows, "\n"))
	}
	var row couchdoc.Change
	mustJSON(t, rows[1], &row)
	if row.ID != "todo" || !row.Deleted {
		t.Errorf("changes row 2 = %+v", row)
	}
	if out := ok(t, "conflicts", db); out != "" {
		t.Errorf("conflicts of a store without any: %q", out)
	}
	if r := cli(t, nil, "resolve", db, "list"); r.code != 0 || !strings.Contains(r.stderr, "no conflicts") {
		t.Errorf("resolve without conflicts: %d %q", r.code, r.stderr)
	}
}

func mustJSON(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
}

func TestScrub(t *testing.T) {
	addSecret("hunter2")
	for in, want := range map[string]string{
		`Get "http://bob:hunter2@127.0.0.1:5984/db": refused`: `Get "http://bob@127.0.0.1:5984/db": refused`,
		"https://x:y@h/db and http://h/db":                    "https://x@h/db and http://h/db",
		"password hunter2 leaked":                             "password *** leaked",
	} {
		if got := scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
