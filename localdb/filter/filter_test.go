package filter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/filter"
	"github.com/settee/settee/localdb/localdbtest"
)

var bg = context.Background()

func put(t *testing.T, db *localdb.DB, id, body string) {
	t.Helper()
	if _, err := db.Put(bg, &couchdoc.Doc{ID: id, Body: json.RawMessage(body)}); err != nil {
		t.Fatal(err)
	}
}

// passing lists the documents of db's feed fn lets through.
func passing(t *testing.T, db *localdb.DB, fn func(*couchdoc.Doc) bool) []string {
	t.Helper()
	var ids []string
	if _, err := db.Changes(bg, localdb.ChangesOptions{Filter: fn}, func(c *localdb.Change) error {
		ids = append(ids, c.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestFilters(t *testing.T) {
	db := localdbtest.Open(t)
	put(t, db, "_design/app", `{
		"filters": {
			"by_type": "function (doc, req) { return doc.type === req.query.type && req.userCtx.name === 'ann' && req.method === 'GET'; }",
			"throws": "function (doc) { if (doc.type === 'b') throw new Error('no'); return true; }"
		},
		"views": {"lib": {"k": "exports.ok = function (d) { return d.type === 'a'; };"},
			"as": {"map": "function (doc) { if (require('views/lib/k').ok(doc)) emit(doc._id, null); }"}}
	}`)
	for i, typ := range []string{"a", "b", "a", "c"} {
		put(t, db, fmt.Sprintf("d%d", i), fmt.Sprintf(`{"type":%q}`, typ))
	}
	fn, err := filter.Func(bg, db, "app", "by_type", &filter.Request{Query: map[string]string{"type": "a"}, UserName: "ann", DB: "db"})
	if err != nil {
		t.Fatal(err)
	}
	if got := passing(t, db, fn); !slices.Equal(got, []string{"d0", "d2"}) {
		t.Errorf("by_type=a: %v", got)
	}
	fn, err = filter.Func(bg, db, "app", "throws", &filter.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if got := passing(t, db, fn); slices.Contains(got, "d1") || !slices.Contains(got, "d3") {
		t.Errorf("a throwing filter let through %v", got)
	}
	vf, err := filter.ViewFunc(bg, db, "app", "as")
	if err != nil {
		t.Fatal(err)
	}
	if got := passing(t, db, vf); !slices.Equal(got, []string{"d0", "d2"}) {
		t.Errorf("_view as: %v", got)
	}
	for _, c := range []struct{ ddoc, name, reason string }{
		{"nope", "f", "missing"}, {"app", "nope", "missing json key: nope"},
	} {
		_, err := filter.Func(bg, db, c.ddoc, c.name, &filter.Request{})
		var ce *couchdoc.Error
		if !errors.Is(err, couchdoc.ErrNotFound) || !errors.As(err, &ce) || ce.Reason != c.reason {
			t.Errorf("%s/%s: %v, want not_found %q", c.ddoc, c.name, err, c.reason)
		}
	}
	if _, err := filter.ViewFunc(bg, db, "app", "nope"); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Errorf("missing view: %v", err)
	}
	for in, ok := range map[string]bool{"a/b": true, "a%2Fb": false, "a": false, "a/b/c": false, "/a/b/": true} {
		if _, _, got := filter.Split(in); got != ok {
			t.Errorf("Split(%q) ok = %v", in, got)
		}
	}
}
