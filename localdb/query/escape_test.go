package query_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// Field names with escaped dots ("foo\\.bar", the member "foo.bar") and
// escaped dollars ("\\$foobar", the member "$foobar") answer as in
// CouchDB 3.5.0 (mango_util:parse_field), indexed or not, in selectors
// and in fields projections: the cases of PouchDB 9's find suite
// (test.escaping.js). An index covering "foo\\.bar" served nothing.
func TestEscapedFieldNames(t *testing.T) {
	db := localdbtest.Open(t)
	put(t, db, "doc1", `{"foo":{"bar":"a"}}`)
	put(t, db, "doc2", `{"foo.bar":"a"}`)
	put(t, db, "doc3", `{"$foobar":"a"}`)
	put(t, db, "doc4", `{"foo":{"bar":{"0foobar":"a"},"0baz":false}}`)
	cases := []struct{ req, want string }{
		{`{"selector":{"foo\\.bar":"a"},"fields":["_id"]}`, `{"_id":"doc2"}`},
		{`{"selector":{"foo.bar":"a"},"fields":["_id"]}`, `{"_id":"doc1"}`},
		{`{"selector":{"foo\\.bar":{"$gt":null}},"fields":["_id","foo\\.bar"]}`, `{"_id":"doc2","foo.bar":"a"}`},
		{`{"selector":{"\\$foobar":"a"},"fields":["_id","\\$foobar"]}`, `{"$foobar":"a","_id":"doc3"}`},
		{`{"selector":{"foo.bar.0foobar":"a"},"fields":["_id","foo.0baz"]}`, `{"_id":"doc4","foo":{"0baz":false}}`},
	}
	run := func(stage string) {
		t.Helper()
		for _, c := range cases {
			got := strings.Join(docsOf(t, find(t, db, c.req)), ",")
			if got != c.want {
				t.Errorf("%s: %s = %s, want %s", stage, c.req, got, c.want)
			}
		}
	}
	run("unindexed")
	createIndex(t, db, `{"index":{"fields":["foo\\.bar"]},"name":"dot","type":"json"}`)
	createIndex(t, db, `{"index":{"fields":["$foobar"]},"name":"dollar","type":"json"}`)
	createIndex(t, db, `{"index":{"fields":["foo.bar.0foobar"]},"name":"deep","type":"json"}`)
	createIndex(t, db, `{"index":{"fields":["foo.bar"]},"name":"nested","type":"json"}`)
	run("indexed")
	if ix := explainIndex(t, db, `{"selector":{"foo\\.bar":"a"}}`); ix != "dot" {
		t.Errorf("foo\\.bar is served by %s, want dot", ix)
	}
}

// docsOf is a result's documents as JSON with sorted members.
func docsOf(t testing.TB, res *query.Result) []string {
	t.Helper()
	out := []string{}
	for _, d := range res.Docs {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return out
}

// explainIndex is the name of the index _explain picks for a request.
func explainIndex(t testing.TB, db *localdb.DB, req string) string {
	t.Helper()
	e, err := query.Explain(bg, db, "db", []byte(req))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(e["index"])
	var ix struct{ Name string }
	json.Unmarshal(b, &ix)
	return ix.Name
}
