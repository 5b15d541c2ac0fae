package query_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

func viewJSON(t *testing.T, res *query.ViewResult) string {
	t.Helper()
	b, err := json.Marshal(res.Rows)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func queryView(t *testing.T, db *localdb.DB, ddoc, view, q string) (*query.ViewResult, error) {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	o, err := query.ViewOptionsFromURL(v)
	if err != nil {
		return nil, err
	}
	return query.View(bg, db, ddoc, view, o)
}

// TestViewIncremental: a view follows writes, deletes and a change of its
// design document's functions.
func TestViewIncremental(t *testing.T) {
	db := localdbtest.Open(t)
	put(t, db, "_design/d", `{"views":{"by_k":{"map":"function (doc) { if (doc.k !== undefined) emit(doc.k, doc.v); }","reduce":"_sum"}}}`)
	put(t, db, "a", `{"k":1,"v":2}`)
	revB := put(t, db, "b", `{"k":[1,2],"v":3}`)
	put(t, db, "c", `{"k":"x","v":4}`)
	res, err := queryView(t, db, "d", "by_k", "reduce=false")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := viewJSON(t, res), `[{"id":"a","key":1,"value":2},{"id":"c","key":"x","value":4},{"id":"b","key":[1,2],"value":3}]`; got != want {
		t.Fatalf("rows %s, want %s", got, want)
	}
	if _, err := db.Delete(bg, "b", revB); err != nil {
		t.Fatal(err)
	}
	put(t, db, "d", `{"k":"x","v":10}`)
	res, err = queryView(t, db, "d", "by_k", "group=true")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := viewJSON(t, res), `[{"key":1,"value":2},{"key":"x","value":14}]`; got != want {
		t.Fatalf("grouped %s, want %s", got, want)
	}
	// update=false answers from the stored rows.
	put(t, db, "e", `{"k":1,"v":100}`)
	res, err = queryView(t, db, "d", "by_k", "update=false")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := viewJSON(t, res), `[{"key":null,"value":16}]`; got != want {
		t.Fatalf("stale %s, want %s", got, want)
	}
	// A new map function rebuilds the view.
	ddoc, err := db.Get(bg, "_design/d", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "_design/d", Rev: ddoc.Rev, Body: json.RawMessage(`{"views":{"by_k":{"map":"function (doc) { emit(doc._id, 1); }","reduce":"_count"}}}`)}); err != nil {
		t.Fatal(err)
	}
	res, err = queryView(t, db, "d", "by_k", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := viewJSON(t, res), `[{"key":null,"value":4}]`; got != want {
		t.Fatalf("rebuilt %s, want %s", got, want)
	}
	if _, err := queryView(t, db, "d", "nope", ""); !errors.Is(err, query.ErrMissingView) {
		t.Fatalf("missing view: %v", err)
	}
	if _, err := queryView(t, db, "d", "by_k", "group=true&reduce=false"); couchdoc.StatusOf(err) != 400 {
		t.Fatalf("group on a map query: %v", err)
	}
}
