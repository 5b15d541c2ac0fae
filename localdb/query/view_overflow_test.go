package query_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/settee/settee/localdb/localdbtest"
)

// TestReduceOverflow: a JavaScript reduce whose output does not shrink
// ends the answer with CouchDB's reduce_overflow_error row
// (reduce_limit); one that shrinks, or a small one that does not, is
// answered.
func TestReduceOverflow(t *testing.T) {
	db := localdbtest.Open(t)
	put(t, db, "_design/d", `{"views":{
		"grows":{"map":"function (doc) { emit(doc._id, doc.text); }","reduce":"function (k, v, r) { return v; }"},
		"shrinks":{"map":"function (doc) { emit(doc._id, doc.text); }","reduce":"function (k, v, r) { return v.length; }"}}}`)
	text := strings.Repeat("x", 100)
	for i := range 3 {
		put(t, db, fmt.Sprintf("doc-%03d", i), `{"text":"`+text+`"}`)
	}
	// Three values make an output of about 300 characters: under
	// CouchDB's 4,096, answered.
	res, err := queryView(t, db, "d", "grows", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := viewJSON(t, res); !strings.Contains(got, `"value":["`) {
		t.Fatalf("small growing reduce: %s", got)
	}
	for i := 3; i < 100; i++ {
		put(t, db, fmt.Sprintf("doc-%03d", i), `{"text":"`+text+`"}`)
	}
	res, err = queryView(t, db, "d", "grows", "")
	if err != nil {
		t.Fatal(err)
	}
	got := viewJSON(t, res)
	if !strings.HasPrefix(got, `[{"key":null,"error":"reduce_overflow_error","reason":"Reduce output must shrink more rapidly: input size: `) || len(res.Rows) != 1 {
		t.Fatalf("growing reduce over 100 rows: %s", got)
	}
	res, err = queryView(t, db, "d", "shrinks", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := viewJSON(t, res), `[{"key":null,"value":100}]`; got != want {
		t.Fatalf("shrinking reduce: %s, want %s", got, want)
	}
	// Grouped: the first group's row is the error, and the answer ends.
	res, err = queryView(t, db, "d", "grows", "group=true&limit=2")
	if err != nil {
		t.Fatal(err)
	}
	if got := viewJSON(t, res); len(res.Rows) != 2 || strings.Contains(got, "error") {
		t.Fatalf("one row per group is small: %s", got)
	}
}
