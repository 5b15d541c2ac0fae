package query_test

import (
	"errors"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// FuzzFind runs arbitrary _find bodies against a small indexed store: no
// panic, and every refusal is a typed CouchDB error.
func FuzzFind(f *testing.F) {
	for _, s := range []string{
		`{"selector": {"n": {"$gt": 1}}, "sort": ["n"], "limit": 2}`,
		`{"selector": {"s": {"$regex": "^a"}, "n": {"$in": [1, "x"]}}, "fields": ["_id", "o.x"]}`,
		`{"selector": {"$or": [{"n": 1}, {"t": "b"}]}, "use_index": ["i", "n-s"], "bookmark": "AAA"}`,
		`{"selector": {"n": {"$lte": [1, {"a": null}]}}, "sort": [{"n": "desc"}], "skip": 1, "execution_stats": true}`,
		`{"selector": {"_id": "d1"}, "sort": ["_id"]}`,
	} {
		f.Add(s)
	}
	db := localdbtest.Open(f)
	for i, b := range []string{`{"n": 1, "s": "a"}`, `{"n": "x", "t": "b"}`, `{"n": [1, 2], "s": "B", "o": {"x": 1}}`, `{"s": null}`} {
		put(f, db, "d"+string(rune('0'+i)), b)
	}
	createIndex(f, db, `{"index": {"fields": ["n", "s"]}, "ddoc": "i", "name": "n-s"}`)
	createIndex(f, db, `{"index": {"fields": ["n"]}, "ddoc": "i", "name": "n"}`)
	f.Fuzz(func(t *testing.T, body string) {
		_, err := query.Find(bg, db, []byte(body))
		var ce *couchdoc.Error
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("%s: untyped error %T %v", body, err, err)
		}
		if _, err := query.Explain(bg, db, "db", []byte(body)); err != nil && !errors.As(err, &ce) {
			t.Fatalf("%s: explain: untyped error %v", body, err)
		}
	})
}
