package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/server/servertest"
)

// TestFindSameAsPouchDB runs the same _index and _find requests on
// pouchdb-server and on our server, over the same documents, and compares
// the answers where both define them: the documents, in order when the
// query sorts, as a set otherwise. Strings are lowercase ASCII, where
// PouchDB's code-point order and CouchDB's ICU order agree. Left out,
// where PouchDB departs from CouchDB: skip or an upper bound with a
// descending sort, and
// $lte, $ne, $nor and $not matching documents without the field (CouchDB
// pushes negations into the fields, which must then exist).
func TestFindSameAsPouchDB(t *testing.T) {
	pouch := testpeer.PouchDB(t)
	ours := servertest.Start(t, nil)
	urls := []string{pouch.CreateDB(t, "q"), ours.CreateDB(t, "q")}
	r := rand.New(rand.NewSource(7))
	var docs []map[string]any
	for i := 0; i < 80; i++ {
		d := map[string]any{"_id": fmt.Sprintf("doc%03d", i)}
		if r.Intn(6) > 0 {
			d["n"] = r.Intn(10)
		}
		if r.Intn(5) > 0 {
			d["s"] = []string{"apple", "banana", "b", "cherry", "date", "apple pie", "zeta"}[r.Intn(7)]
		}
		if r.Intn(4) > 0 {
			d["t"] = []string{"a", "b"}[r.Intn(2)]
		}
		docs = append(docs, d)
	}
	bulk, _ := json.Marshal(map[string]any{"docs": docs})
	for _, u := range urls {
		mustDo(t, 201, "POST", u+"/_bulk_docs", string(bulk))
		for _, ix := range []string{
			`{"index": {"fields": ["n"]}, "ddoc": "i-n", "name": "n"}`,
			`{"index": {"fields": ["t", "n"]}, "ddoc": "i-tn", "name": "t-n"}`,
			`{"index": {"fields": ["s"]}, "ddoc": "i-s", "name": "s"}`,
		} {
			var res map[string]any
			json.Unmarshal(mustDo(t, 200, "POST", u+"/_index", ix), &res)
			if res["result"] != "created" {
				t.Fatalf("%s: create index: %v", u, res)
			}
		}
	}
	queries := []struct {
		q      string
		sorted bool
	}{
		{`{"selector": {"n": {"$gt": 3}}, "sort": ["n"], "limit": 100}`, true},
		{`{"selector": {"n": {"$gte": 2}}, "sort": [{"n": "desc"}], "limit": 6}`, true},
		{`{"selector": {"t": "a", "n": {"$gt": 0, "$lte": 5}}, "sort": ["t", "n"], "limit": 100}`, true},
		{`{"selector": {"s": {"$gte": "b", "$lt": "d"}}, "sort": ["s"], "limit": 100}`, true},
		{`{"selector": {"n": 4}, "fields": ["_id", "s"], "limit": 100}`, true},
		{`{"selector": {"n": {"$in": [1, 2, 3]}}, "limit": 100}`, false},
		{`{"selector": {"s": {"$regex": "^b"}}, "limit": 100}`, false},
		{`{"selector": {"n": {"$exists": true}, "t": {"$exists": true, "$ne": "a"}}, "limit": 100}`, false},
		{`{"selector": {"$or": [{"n": 1}, {"t": "b"}]}, "limit": 100}`, false},
		{`{"selector": {"s": {"$gt": "apple"}, "n": {"$type": "number"}}, "limit": 100}`, false},
		{`{"selector": {"n": {"$exists": true}, "s": {"$exists": true}, "$nor": [{"n": {"$lt": 8}}, {"s": "zeta"}]}, "limit": 100}`, false},
	}
	for _, c := range queries {
		var answers [2][]any
		for i, u := range urls {
			var res struct {
				Docs []map[string]any `json:"docs"`
			}
			if err := json.Unmarshal(mustDo(t, 200, "POST", u+"/_find", c.q), &res); err != nil {
				t.Fatal(err)
			}
			for _, d := range res.Docs {
				delete(d, "_rev") // revision ids differ between the two stores' hashing of bulk docs
				answers[i] = append(answers[i], d)
			}
			if !c.sorted {
				sort.Slice(answers[i], func(a, b int) bool {
					return fmt.Sprint(answers[i][a]) < fmt.Sprint(answers[i][b])
				})
			}
		}
		if len(answers[0]) == 0 || !reflect.DeepEqual(answers[0], answers[1]) {
			t.Errorf("%s\npouchdb: %v\nsettee:  %v", c.q, answers[0], answers[1])
		}
	}
}
