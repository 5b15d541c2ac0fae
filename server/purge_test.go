package server

import (
	"fmt"
	"strings"
	"testing"
)

func TestPurgeEndpoint(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ra := ts.putDoc("db", "a", map[string]any{"v": 1})
	rb := ts.putDoc("db", "b", map[string]any{"v": 1})
	seq := ts.updateSeq("db")

	// The answer lists the ids in request order, with what was removed.
	r := ts.must(201, "POST", "/db/_purge", `{"b":["`+rb+`"],"nope":["1-abc"],"a":["1-0123"]}`)
	if got, want := strings.TrimSpace(string(r.body)), `{"purge_seq":null,"purged":{"b":["`+rb+`"],"nope":[],"a":[]}}`; got != want {
		t.Errorf("answer %s, want %s", got, want)
	}
	ts.wantError(404, "not_found", "GET", "/db/b", nil)
	ts.must(200, "GET", "/db/a", nil)
	info := ts.must(200, "GET", "/db", nil).json(t)
	if info["purge_seq"] != float64(3) || info["doc_count"] != float64(1) || info["update_seq"] != seq+1 {
		t.Errorf("db info after purge: %v", info)
	}
	if sz := info["sizes"].(map[string]any); sz["file"].(float64) < sz["active"].(float64) || sz["active"].(float64) <= 0 || sz["external"].(float64) <= 0 {
		t.Errorf("sizes %v", sz)
	}
	ch := ts.must(200, "GET", "/db/_changes", nil).json(t)
	if rs := ch["results"].([]any); len(rs) != 1 || rs[0].(map[string]any)["id"] != "a" {
		t.Errorf("changes after purge: %v", ch)
	}
	infos := ts.must(200, "GET", "/db/_purged_infos", nil).json(t)["purged_infos"].([]any)
	if len(infos) != 3 {
		t.Errorf("purged_infos %v", infos)
	}
	_ = ra

	// Refusals change nothing.
	ts.wantError(415, "bad_content_type", "POST", "/db/_purge", `{"a":["`+ra+`"]}`, "Content-Type", "text/plain")
	ts.wantError(400, "bad_request", "POST", "/db/_purge", `["a"]`)
	ts.wantError(400, "bad_request", "POST", "/db/_purge", `{"a":"`+ra+`"}`)
	ts.wantError(400, "bad_request", "POST", "/db/_purge", `{"a":["x"], "b":[]}`)
	ts.wantError(400, "bad_request", "POST", "/db/_purge", `{"a":[`)
	var many strings.Builder
	many.WriteString("{")
	for i := 0; i < 101; i++ {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"d%d":[]`, i)
	}
	many.WriteString("}")
	ts.wantError(400, "bad_request", "POST", "/db/_purge", many.String())
	ts.wantError(405, "method_not_allowed", "GET", "/db/_purge", nil)
	ts.must(200, "GET", "/db/a", nil)
	if info := ts.must(200, "GET", "/db", nil).json(t); info["purge_seq"] != float64(3) {
		t.Errorf("purge_seq moved on a refused request: %v", info)
	}
}

func TestPurgedInfosLimitEndpoint(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	if r := ts.must(200, "GET", "/db/_purged_infos_limit", nil); strings.TrimSpace(string(r.body)) != "1000" {
		t.Errorf("default limit %s", r.body)
	}
	for _, bad := range []string{"0", "-1", `"5"`, "1.5", "{}"} {
		ts.wantError(400, "bad_request", "PUT", "/db/_purged_infos_limit", bad)
	}
	if r := ts.must(200, "PUT", "/db/_purged_infos_limit", "5"); strings.TrimSpace(string(r.body)) != `{"ok":true}` {
		t.Errorf("put answer %s", r.body)
	}
	if r := ts.must(200, "GET", "/db/_purged_infos_limit", nil); strings.TrimSpace(string(r.body)) != "5" {
		t.Errorf("limit after put %s", r.body)
	}
	ts.wantError(405, "method_not_allowed", "POST", "/db/_purged_infos_limit", "5")
}
