package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// branchDoc is a replicated revision with its history.
func branchDoc(id string, deleted bool, body map[string]any, revs ...string) map[string]any {
	d := map[string]any{"_id": id}
	for k, v := range body {
		d[k] = v
	}
	gen := len(revs)
	d["_rev"] = couchdoc.FormatRev(gen, revs[0])
	d["_revisions"] = map[string]any{"start": gen, "ids": revs}
	if deleted {
		d["_deleted"] = true
	}
	return d
}

// seedConflict writes doc "c" with two branches 2-bbb (winner) and 2-aaa
// over 1-111 with new_edits=false.
func seedConflict(t *testing.T, ts *tserver) {
	t.Helper()
	ts.must(201, "PUT", "/db/c?new_edits=false", branchDoc("c", false, map[string]any{"v": "a"}, "aaa", "111"))
	r := ts.must(201, "POST", "/db/_bulk_docs", map[string]any{
		"new_edits": false,
		"docs":      []any{branchDoc("c", false, map[string]any{"v": "b"}, "bbb", "111")},
	})
	if strings.TrimSpace(string(r.body)) != "[]" {
		t.Fatalf("_bulk_docs new_edits=false: %s", r.body)
	}
}

func TestReplicationEndpoints(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	seedConflict(t, ts)

	m := ts.must(200, "GET", "/db/c?conflicts=true", nil).json(t)
	if m["_rev"] != "2-bbb" || m["v"] != "b" {
		t.Fatalf("winner: %v", m)
	}
	if c, _ := m["_conflicts"].([]any); len(c) != 1 || c[0] != "2-aaa" {
		t.Fatalf("_conflicts: %v", m)
	}

	// open_revs=all, JSON.
	var open []map[string]json.RawMessage
	if err := json.Unmarshal(ts.must(200, "GET", "/db/c?open_revs=all&revs=true", nil).body, &open); err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 {
		t.Fatalf("open_revs=all: %d answers", len(open))
	}
	// open_revs=[...] with a missing rev.
	r := ts.must(200, "GET", `/db/c?open_revs=["2-aaa","9-fff"]&latest=true&revs=true`, nil)
	if err := json.Unmarshal(r.body, &open); err != nil {
		t.Fatal(err)
	}
	if len(open) != 2 || open[0]["ok"] == nil || string(open[1]["missing"]) != `"9-fff"` {
		t.Fatalf("open_revs: %s", r.body)
	}
	// open_revs multipart/mixed, read back with the wire reader.
	r = ts.must(200, "GET", `/db/c?open_revs=["2-aaa","2-bbb","9-fff"]&revs=true`, nil, "Accept", "multipart/mixed")
	var got []string
	err := wire.ReadDocs(bytes.NewReader(r.body), r.header.Get("Content-Type"), func(doc *couchdoc.Doc, revErr error) error {
		if revErr != nil {
			if !errors.Is(revErr, couchdoc.ErrNotFound) {
				t.Errorf("rev error %v", revErr)
			}
			got = append(got, "missing")
			return nil
		}
		if doc.Revisions == nil || doc.Revisions.Start != 2 {
			t.Errorf("no _revisions in %s", doc.Rev)
		}
		got = append(got, doc.Rev)
		return nil
	})
	if err != nil {
		t.Fatalf("multipart open_revs: %v\n%s", err, r.body)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "2-aaa,2-bbb,missing" {
		t.Fatalf("multipart open_revs: %v", got)
	}
	ts.wantError(404, "not_found", "GET", "/db/nosuch?open_revs=all", nil)

	// _revs_diff.
	var diff map[string]couchdoc.RevsDiffResult
	r = ts.must(200, "POST", "/db/_revs_diff", map[string][]string{"c": {"2-aaa", "3-ccc"}, "new": {"1-abc"}})
	if err := json.Unmarshal(r.body, &diff); err != nil {
		t.Fatal(err)
	}
	if len(diff) != 2 || len(diff["c"].Missing) != 1 || diff["c"].Missing[0] != "3-ccc" || diff["new"].Missing[0] != "1-abc" {
		t.Fatalf("_revs_diff: %s", r.body)
	}

	// _bulk_get, JSON.
	req := map[string]any{"docs": []map[string]any{{"id": "c", "rev": "2-aaa"}, {"id": "c", "rev": "5-fff"}, {"id": "nosuch"}, {"id": "c"}}}
	r = ts.must(200, "POST", "/db/_bulk_get?revs=true", req)
	var bg wireBulkGet
	if err := json.Unmarshal(r.body, &bg); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if len(bg.Results) != 4 || bg.Results[0].Docs[0].OK == nil || bg.Results[1].Docs[0].Error == nil ||
		bg.Results[1].Docs[0].Error.Error != "not_found" || bg.Results[2].Docs[0].Error == nil {
		t.Fatalf("_bulk_get: %s", r.body)
	}
	// Without a rev, every leaf, in CouchDB's order (generation, then id).
	var leaves []string
	for _, d := range bg.Results[3].Docs {
		var doc map[string]any
		json.Unmarshal(d.OK, &doc)
		leaves = append(leaves, fmt.Sprint(doc["_rev"]))
	}
	if strings.Join(leaves, ",") != "2-aaa,2-bbb" {
		t.Fatalf("_bulk_get without rev: %v in %s", leaves, r.body)
	}
	// _bulk_get, multipart/mixed.
	r = ts.must(200, "POST", "/db/_bulk_get?revs=true", req, "Accept", "multipart/mixed")
	n, nerr := 0, 0
	err = wire.ReadDocs(bytes.NewReader(r.body), r.header.Get("Content-Type"), func(doc *couchdoc.Doc, revErr error) error {
		if revErr != nil {
			nerr++
		} else {
			n++
		}
		return nil
	})
	if err != nil || n != 3 || nerr != 2 {
		t.Fatalf("multipart _bulk_get: %v docs=%d errors=%d\n%s", err, n, nerr, r.body)
	}

	// _bulk_docs new_edits=true reports every doc, conflicts included.
	r = ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": []any{
		map[string]any{"_id": "n1"}, map[string]any{"_id": "c", "x": 1}, map[string]any{"_id": "c", "_rev": "2-aaa", "x": 2},
	}})
	var res []couchdoc.DocResult
	json.Unmarshal(r.body, &res)
	if len(res) != 3 || !res[0].OK || res[1].Error != "conflict" || !res[2].OK || !strings.HasPrefix(res[2].Rev, "3-") {
		t.Fatalf("_bulk_docs: %s", r.body)
	}
	ts.must(201, "POST", "/db/_ensure_full_commit", nil)

	// _all_docs with keys.
	r = ts.must(200, "POST", "/db/_all_docs?include_docs=true", map[string]any{"keys": []string{"n1", "nosuch", "c"}})
	var all struct {
		TotalRows int `json:"total_rows"`
		Rows      []map[string]any
	}
	json.Unmarshal(r.body, &all)
	if all.TotalRows != 2 || len(all.Rows) != 3 || all.Rows[1]["error"] != "not_found" || all.Rows[0]["doc"] == nil {
		t.Fatalf("_all_docs keys: %s", r.body)
	}
	r = ts.must(200, "GET", `/db/_all_docs?startkey="c"&endkey="c"`, nil)
	json.Unmarshal(r.body, &all)
	if len(all.Rows) != 1 || all.Rows[0]["id"] != "c" {
		t.Fatalf("_all_docs range: %s", r.body)
	}
	r = ts.must(200, "GET", `/db/_all_docs?limit=0`, nil)
	json.Unmarshal(r.body, &all)
	if len(all.Rows) != 0 || all.TotalRows != 2 {
		t.Fatalf("_all_docs limit=0: %s", r.body)
	}
	if lim := ts.must(200, "GET", "/db/_revs_limit", nil); strings.TrimSpace(string(lim.body)) != "1000" {
		t.Fatalf("_revs_limit: %s", lim.body)
	}
	ts.must(200, "PUT", "/db/_revs_limit", "50")
}

type wireBulkGet struct {
	Results []struct {
		ID   string `json:"id"`
		Docs []struct {
			OK    json.RawMessage    `json:"ok"`
			Error *wire.BulkGetError `json:"error"`
		} `json:"docs"`
	} `json:"results"`
}
