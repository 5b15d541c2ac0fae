package query

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/settee/settee/internal/mango"
)

// TestExactRange: which plans take a key in the range as the selector
// matching (so rows are not decoded to be matched), and which rows a $gt
// still sends to the matcher. The differential tests check the answers;
// this pins the decisions.
func TestExactRange(t *testing.T) {
	index := func(fields string) *mango.Index {
		var v any
		if err := json.Unmarshal([]byte(`{"fields": `+fields+`}`), &v); err != nil {
			t.Fatal(err)
		}
		ix, err := mango.ParseIndexDef(v)
		if err != nil {
			t.Fatal(err)
		}
		ix.DDoc, ix.Name = "_design/x", "x"
		return ix
	}
	for _, c := range []struct {
		fields, query string
		exact, gt     bool
	}{
		{`["a", "b"]`, `{"selector": {"a": "x", "b": 3}}`, true, false},
		{`["a", "b"]`, `{"selector": {"a": "x", "b": {"$gte": 3, "$lt": 9}}}`, true, false},
		{`["a", "b"]`, `{"selector": {"a": "x", "b": {"$gt": 3}}}`, true, true},
		{`["a"]`, `{"selector": {"a": {"$gt": 3, "$gte": 3}}}`, true, true},
		{`["a"]`, `{"selector": {"a": {"$gte": 4, "$gt": 3}}}`, true, false},
		{`["a"]`, `{"selector": {"a": {"$lte": 3}}, "sort": ["a"]}`, true, false},
		{`["a"]`, `{"selector": {"a": [1, {"b": 2}]}}`, true, false},
		// A condition the range does not hold, or does not hold exactly.
		{`["a", "b"]`, `{"selector": {"a": {"$gt": 1}, "b": 3}}`, false, true},
		{`["a"]`, `{"selector": {"a": 1, "c": 2}}`, false, false},
		{`["a"]`, `{"selector": {"a": {"$in": [1, 2]}}}`, false, false},
		{`["a"]`, `{"selector": {"a": {"$ne": 1, "$gt": 0}}}`, false, true},
		{`["a"]`, `{"selector": {"a": 1, "$or": [{"b": 1}, {"c": 1}]}}`, false, false},
		{`["a"]`, `{"selector": {"a": {"$exists": true}}}`, false, false},
		{`["a", "_id"]`, `{"selector": {"a": 1, "_id": {"$gt": "k"}}}`, false, true},
	} {
		req, err := parseRequest([]byte(c.query))
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		req.useIndex = []string{"_design/x"}
		p, err := makePlan([]*mango.Index{index(c.fields)}, req)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if p.index == nil || p.exact != c.exact || (p.gtKey != nil) != c.gt {
			t.Errorf("%s on %s: exact %v, gt bound %x; want %v, %v", c.query, c.fields, p.exact, p.gtKey, c.exact, c.gt)
		}
		if p.gtKey != nil && !bytes.HasPrefix(p.gtKey, p.scan.Start) {
			t.Errorf("%s: gt bound %x is not the range's start %x", c.query, p.gtKey, p.scan.Start)
		}
	}
}
