package query_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// TestExplainCandidates compares index_candidates with what CouchDB 3.5
// answered for the same indexes and queries (run by hand on a 3.5.0
// build): the order, usability, first reason and ranking of every index
// not chosen.
func TestExplainCandidates(t *testing.T) {
	db := localdbtest.Open(t)
	for _, ix := range []string{
		`{"index":{"fields":["a"]},"ddoc":"x","name":"a"}`, `{"index":{"fields":["a","b"]},"ddoc":"x","name":"ab"}`,
		`{"index":{"fields":["b"]},"ddoc":"y","name":"b"}`, `{"index":{"fields":["a"]},"ddoc":"y","name":"a2"}`,
	} {
		createIndex(t, db, ix)
	}
	check := checkCandidates(t, db)
	for _, c := range []struct{ q, want string }{
		{`{"selector":{"a":1,"b":2}}`, "x/ab: y/b true less_overlap 3, y/a2 true less_overlap 2, x/a true less_overlap 1, _all_docs true unfavored_type 4"},
		{`{"selector":{"a":1}}`, "x/a: y/b false field_mismatch 3, y/a2 true alphabetically_comes_after 1, x/ab false field_mismatch 3, _all_docs true unfavored_type 2"},
		{`{"selector":{"a":1},"use_index":"y/a2"}`, "y/a2: y/b false field_mismatch 2, x/ab false field_mismatch 2, x/a true excluded_by_user 1, _all_docs true excluded_by_user 1"},
		{`{"selector":{"a":{"$gt":1},"b":2}}`, "x/ab: y/b true less_overlap 3, y/a2 true less_overlap 2, x/a true less_overlap 1, _all_docs true unfavored_type 4"},
	} {
		check(c.q, c.want)
	}
	createIndex(t, db, `{"index":{"fields":["a"],"partial_filter_selector":{"b":{"$gt":0}}},"ddoc":"z","name":"pa"}`)
	for _, c := range []struct{ q, want string }{
		{`{"selector":{"a":{"$gt":0}},"sort":["a"]}`, "x/a: z/pa false is_partial 3, y/b false field_mismatch 2, y/a2 true alphabetically_comes_after 1, x/ab false field_mismatch 2, _all_docs false field_mismatch 2"},
		{`{"selector":{"a":1,"b":{"$gt":0}},"sort":["b"]}`, "x/ab: z/pa false is_partial 3, y/b true less_overlap 1, y/a2 false sort_order_mismatch 2, x/a false sort_order_mismatch 2, _all_docs false field_mismatch 2"},
		{`{"selector":{"_id":{"$gt":"a"}},"sort":["_id"]}`, "_all_docs: z/pa false is_partial 2, y/b false field_mismatch 1, y/a2 false field_mismatch 1, x/ab false field_mismatch 1, x/a false field_mismatch 1"},
	} {
		check(c.q, c.want)
	}
}

func checkCandidates(t *testing.T, db *localdb.DB) func(q, want string) {
	return func(q, want string) {
		ex, err := query.Explain(bg, db, "db", []byte(q))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(ex)
		var e struct {
			Index struct {
				DDoc *string `json:"ddoc"`
				Name string  `json:"name"`
			} `json:"index"`
			Candidates []struct {
				Index struct {
					DDoc *string `json:"ddoc"`
					Name string  `json:"name"`
				} `json:"index"`
				Analysis struct {
					Usable  bool                    `json:"usable"`
					Reasons []struct{ Name string } `json:"reasons"`
					Ranking int                     `json:"ranking"`
				} `json:"analysis"`
			} `json:"index_candidates"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		name := func(ddoc *string, n string) string {
			if ddoc == nil {
				return n
			}
			return strings.TrimPrefix(*ddoc, "_design/") + "/" + n
		}
		var parts []string
		for _, cand := range e.Candidates {
			parts = append(parts, fmt.Sprintf("%s %v %s %d", name(cand.Index.DDoc, cand.Index.Name),
				cand.Analysis.Usable, cand.Analysis.Reasons[0].Name, cand.Analysis.Ranking))
		}
		if got := name(e.Index.DDoc, e.Index.Name) + ": " + strings.Join(parts, ", "); got != want {
			t.Errorf("%s:\n got %s\nwant %s", q, got, want)
		}
	}
}
