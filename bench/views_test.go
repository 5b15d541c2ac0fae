package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestViewsPhase runs phase views on 600 documents without CouchDB (set
// SETTEE_COUCHDB_URL to add it): settee serve and the store in process
// both build both design documents, see the edits, time every shape and
// agree on the first answers; settee serve takes 300 new documents with
// and without a validate_doc_update and refuses what it refuses.
func TestViewsPhase(t *testing.T) {
	args := []string{"-phases", "views", "-docs", "600", "-view-queries", "10", "-vdu-writes", "300", "-db-prefix", "benchtest-views"}
	if u := os.Getenv("SETTEE_COUCHDB_URL"); u != "" {
		args = append(args, "-couch", u)
	} else {
		t.Log("SETTEE_COUCHDB_URL unset: settee serve and the store in process only")
	}
	h := runHarness(t, 5*time.Minute, args...)
	res := h.res
	if len(res.Views) < 2 {
		t.Fatalf("views contenders: %+v", res.Views)
	}
	edits := (&Dataset{Seed: 1, Docs: 600}).ChangedCount()
	for _, v := range res.Views {
		if len(v.Builds) != len(viewDDocs) {
			t.Fatalf("%s: builds %+v", v.Contender, v.Builds)
		}
		for _, b := range v.Builds {
			if b.Seconds <= 0 || b.DocsPerSec <= 0 || b.Writes != edits || b.IncrementalMs <= 0 {
				t.Errorf("%s: build %+v, want %d writes", v.Contender, b, edits)
			}
		}
		shapes := 0
		for _, d := range viewDDocs {
			shapes += len(d.shapes)
		}
		if len(v.Shapes) != shapes {
			t.Errorf("%s: %d shapes, want %d", v.Contender, len(v.Shapes), shapes)
		}
		for _, s := range v.Shapes {
			if s.Queries != 10 || s.P50Ms <= 0 || s.P99Ms < s.P50Ms {
				t.Errorf("%s: shape %+v", v.Contender, s)
			}
		}
	}
	agreed := 0
	for _, c := range res.Checks {
		if strings.HasPrefix(c, "views: ") && strings.Contains(c, "answers agree") {
			agreed++
		}
	}
	if agreed != len(res.Views[0].Shapes) || len(res.Errors) > 0 {
		t.Errorf("checks %q, errors %q", res.Checks, res.Errors)
	}
	if len(res.VDUWrites) == 0 || res.VDUWrites[0].Server != "settee serve" {
		t.Fatalf("writes with a validator: %+v", res.VDUWrites)
	}
	for _, w := range res.VDUWrites {
		if w.Docs != 300 || w.PlainSeconds <= 0 || w.ValidatedSeconds <= 0 || w.Ratio <= 0 {
			t.Errorf("writes with a validator on %s: %+v", w.Server, w)
		}
	}
	if !strings.Contains(h.stdout, "| writes, validate_doc_update") {
		t.Errorf("no validate_doc_update table on stdout")
	}
	if !strings.Contains(h.stdout, "| views") || !strings.Contains(h.stdout, "group_level=1 over one type") {
		t.Errorf("no views table on stdout")
	}
}

// TestSameViewAnswers checks the comparison the phase relies on sees a
// differing row and tolerates a float sum's last digits.
func TestSameViewAnswers(t *testing.T) {
	a := `{"rows":[{"key":["a",1],"value":{"sum":0.30000000000000004,"count":2}}]}`
	for _, c := range []struct {
		b    string
		same bool
	}{
		{`{"rows":[{"key":["a",1],"value":{"sum":0.3,"count":2}}]}`, true},
		{`{"rows":[{"key":["a",1],"value":{"sum":0.3,"count":3}}]}`, false},
		{`{"rows":[{"key":["a",2],"value":{"sum":0.3,"count":2}}]}`, false},
		{`{"rows":[]}`, false},
		{`{"total_rows":1,"rows":[{"key":["a",1],"value":{"sum":0.3,"count":2}}]}`, false},
	} {
		if err := sameViewAnswers([]byte(a), []byte(c.b)); (err == nil) != c.same {
			t.Errorf("%s: err %v, want same=%v", c.b, err, c.same)
		}
	}
}
