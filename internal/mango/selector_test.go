package mango

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

const doc = `{
	"_id": "mydoc", "name": "Ann", "age": 31, "score": 7.5, "tags": ["a", "b", "c"],
	"nested": {"x": {"y": 2}, "dot.key": true, "list": [{"k": 1}, {"k": 5}]},
	"nothing": null, "flag": false, "nums": [1, 2, 3], "empty": [], "obj": {"p": 1, "q": [1]}
}`

func TestMatch(t *testing.T) {
	cases := []struct {
		sel  string
		want bool
	}{
		{`{}`, true},
		{`{"name": "Ann"}`, true},
		{`{"name": "Bob"}`, false},
		{`{"name": {"$eq": "Ann"}}`, true},
		{`{"name": {"$ne": "Ann"}}`, false},
		{`{"missing": {"$ne": "Ann"}}`, false},
		{`{"age": {"$gt": 30}}`, true},
		{`{"age": {"$gt": 31}}`, false},
		{`{"age": {"$gte": 31}}`, true},
		{`{"age": {"$lt": 31.5}}`, true},
		{`{"age": {"$lte": 30}}`, false},
		{`{"age": 31.0}`, true},
		{`{"age": {"$gt": 30, "$lt": 40}}`, true},
		{`{"age": {"$gt": 30, "$lt": 31}}`, false},
		// Collation across types: null < false < true < numbers < strings < arrays < objects.
		{`{"age": {"$lt": "0"}}`, true},
		{`{"age": {"$gt": true}}`, true},
		{`{"name": {"$gt": 1000}}`, true},
		{`{"name": {"$lt": []}}`, true},
		{`{"tags": {"$lt": {}}}`, true},
		{`{"nothing": {"$lt": false}}`, true},
		{`{"flag": {"$gt": null, "$lt": true}}`, true},
		{`{"obj": {"$gt": ["z"]}}`, true},
		{`{"missing": {"$lt": 1}}`, false},
		{`{"missing": {"$exists": false}}`, true},
		{`{"missing": {"$exists": true}}`, false},
		{`{"nothing": {"$exists": true}}`, true},
		{`{"nothing": null}`, true},
		{`{"nothing": {"$type": "null"}}`, true},
		{`{"flag": {"$type": "boolean"}}`, true},
		{`{"age": {"$type": "number"}}`, true},
		{`{"age": {"$type": "string"}}`, false},
		{`{"tags": {"$type": "array"}}`, true},
		{`{"obj": {"$type": "object"}}`, true},
		{`{"missing": {"$type": "null"}}`, false},
		{`{"name": {"$in": ["Bob", "Ann"]}}`, true},
		{`{"name": {"$in": []}}`, false},
		{`{"tags": {"$in": ["z", "b"]}}`, true},
		{`{"name": {"$nin": ["Bob"]}}`, true},
		{`{"name": {"$nin": ["Ann"]}}`, false},
		{`{"tags": {"$nin": ["a"]}}`, false},
		{`{"missing": {"$nin": ["a"]}}`, false},
		{`{"tags": {"$all": ["a", "c"]}}`, true},
		{`{"tags": {"$all": ["a", "z"]}}`, false},
		{`{"tags": {"$all": []}}`, false},
		{`{"name": {"$all": ["Ann"]}}`, false},
		{`{"tags": {"$size": 3}}`, true},
		{`{"tags": {"$size": 2}}`, false},
		{`{"empty": {"$size": 0}}`, true},
		{`{"name": {"$size": 3}}`, false},
		{`{"age": {"$mod": [10, 1]}}`, true},
		{`{"age": {"$mod": [10, 2]}}`, false},
		{`{"score": {"$mod": [2, 1]}}`, false},
		{`{"name": {"$regex": "^A"}}`, true},
		{`{"name": {"$regex": "^B"}}`, false},
		{`{"age": {"$regex": "3"}}`, false},
		{`{"name": {"$beginsWith": "An"}}`, true},
		{`{"nums": {"$elemMatch": {"$gt": 2}}}`, true},
		{`{"nums": {"$elemMatch": {"$gt": 3}}}`, false},
		{`{"nested.list": {"$elemMatch": {"k": 5}}}`, true},
		{`{"nested.list": {"$elemMatch": {"k": {"$gt": 5}}}}`, false},
		{`{"nums": {"$allMatch": {"$gt": 0}}}`, true},
		{`{"nums": {"$allMatch": {"$gt": 1}}}`, false},
		{`{"empty": {"$allMatch": {"$gt": 1}}}`, false},
		{`{"name": {"$elemMatch": {"$gt": 1}}}`, false},
		{`{"obj": {"$keyMapMatch": {"$eq": "q"}}}`, true},
		{`{"nested.x.y": 2}`, true},
		{`{"nested": {"x": {"y": 2}}}`, true},
		{`{"nested": {"x": {"y": {"$gt": 2}}}}`, false},
		{`{"nested.dot\\.key": true}`, true},
		{`{"nested.list.1.k": 5}`, true},
		{`{"nested.list.7.k": 5}`, false},
		{`{"name.first": "A"}`, false},
		{`{"obj": {"$eq": {"q": [1], "p": 1}}}`, true},
		{`{"obj": {"$eq": {"p": 1}}}`, false},
		{`{"tags": ["a", "b", "c"]}`, true},
		{`{"tags": ["a", "b"]}`, false},
		{`{"$and": [{"name": "Ann"}, {"age": 31}]}`, true},
		{`{"$and": [{"name": "Ann"}, {"age": 32}]}`, false},
		{`{"$and": []}`, true},
		{`{"$or": [{"name": "Bob"}, {"age": 31}]}`, true},
		{`{"$or": [{"name": "Bob"}, {"age": 32}]}`, false},
		{`{"$nor": [{"name": "Bob"}, {"age": 32}]}`, true},
		{`{"$nor": [{"name": "Ann"}]}`, false},
		{`{"$not": {"name": "Ann"}}`, false},
		{`{"name": {"$not": {"$eq": "Bob"}}}`, true},
		// CouchDB 3.5 pushes negations into the fields, which must exist.
		{`{"missing": {"$not": {"$eq": "Bob"}}}`, false},
		{`{"$nor": [{"missing": 1}]}`, false},
		{`{"$nor": [{"missing": {"$exists": true}}]}`, true},
		{`{"$not": {"name": "Bob", "missing": 1}}`, true},
		{`{"$not": {"name": "Ann", "age": 31}}`, false},
		{`{"missing": {"$not": {"$size": 2}}}`, false},
		{`{"age": {"$or": [{"$lt": 10}, {"$gt": 30}]}}`, true},
		{`{"age": {"$and": [{"$gt": 10}, {"$lt": 30}]}}`, false},
		{`{"_id": "mydoc", "name": "Ann"}`, true},
		{`{"_id": {"$gt": null}}`, true},
	}
	for _, c := range cases {
		s, err := Parse([]byte(c.sel))
		if err != nil {
			t.Errorf("Parse(%s): %v", c.sel, err)
			continue
		}
		got, err := s.MatchJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s: got %v, want %v", c.sel, got, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, sel := range []string{
		``, `[]`, `"x"`, `null`, `{"a": 1} x`, `{"a":`,
		`{"$foo": 1}`, `{"a": {"$foo": 1}}`,
		`{"a": {"$in": 1}}`, `{"a": {"$nin": {}}}`, `{"a": {"$all": "x"}}`,
		`{"a": {"$exists": 1}}`, `{"a": {"$type": "int"}}`, `{"a": {"$type": 1}}`,
		`{"a": {"$size": -1}}`, `{"a": {"$size": 1.5}}`, `{"a": {"$size": "1"}}`,
		`{"a": {"$mod": [0, 1]}}`, `{"a": {"$mod": [2]}}`, `{"a": {"$mod": [1.5, 1]}}`,
		`{"a": {"$regex": "("}}`, `{"a": {"$regex": 1}}`,
		`{"$and": {}}`, `{"$or": [1]}`, `{"$nor": "x"}`, `{"$not": []}`,
		`{"a": {"$elemMatch": 1}}`, `{"a": {"$allMatch": []}}`,
		`{"a": {"b": {"$bad": 1}}}`,
	} {
		_, err := Parse([]byte(sel))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%s) = %v, want *SyntaxError", sel, err)
			continue
		}
		if !errors.Is(err, couchdoc.ErrBadRequest) || couchdoc.StatusOf(err) != 400 {
			t.Errorf("Parse(%s): %v does not unwrap to a 400 bad_request", sel, err)
		}
	}
}

func TestMatchDoc(t *testing.T) {
	s, err := Parse([]byte(`{"_id": {"$beginsWith": "a"}, "_deleted": {"$exists": false}, "n": {"$gte": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		doc  couchdoc.Doc
		want bool
	}{
		{couchdoc.Doc{ID: "a1", Rev: "1-x", Body: []byte(`{"n":2}`)}, true},
		{couchdoc.Doc{ID: "b1", Body: []byte(`{"n":2}`)}, false},
		{couchdoc.Doc{ID: "a2", Body: []byte(`{"n":1}`)}, false},
		{couchdoc.Doc{ID: "a3", Deleted: true, Body: []byte(`{"n":3}`)}, false},
		{couchdoc.Doc{ID: "a4", Body: []byte(`[1]`)}, false},
	}
	for _, c := range cases {
		if got := s.MatchDoc(&c.doc); got != c.want {
			t.Errorf("MatchDoc(%s %s): got %v", c.doc.ID, c.doc.Body, got)
		}
	}
}

func TestCompareOrder(t *testing.T) {
	// Each value sorts strictly before the next; strings in ICU's order
	// (lowercase first), as CouchDB sorts them.
	order := []string{`null`, `false`, `true`, `-1`, `0`, `1.5`, `2`, `""`, `"a"`, `"A"`, `"b"`, `[]`, `[1]`, `[1,2]`, `[2]`, `{}`, `{"a":1}`, `{"a":2}`, `{"a":2,"b":1}`, `{"b":0}`}
	vals := make([]any, len(order))
	for i, s := range order {
		vals[i] = decode(t, s)
	}
	for i := range vals {
		for j := range vals {
			want := cmpInt(i, j)
			if got := Compare(vals[i], vals[j]); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
}

func FuzzParseMatch(f *testing.F) {
	for _, s := range []string{`{}`, `{"a": {"$gt": 1}}`, `{"$or": [{"a": 1}, {"b": {"$in": [1, "x"]}}]}`, `{"a.b": {"$elemMatch": {"c": {"$regex": "x"}}}}`, `{"a": {"$mod": [3, 1]}}`, `{"$not": {"a": {"$size": 2}}}`} {
		f.Add(s, doc)
	}
	f.Fuzz(func(t *testing.T, sel, d string) {
		s, err := Parse([]byte(sel))
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse error %T is not a *SyntaxError", err)
			}
			return
		}
		_, _ = s.MatchJSON([]byte(d))
	})
}

func decode(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
