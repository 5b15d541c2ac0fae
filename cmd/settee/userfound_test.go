package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
