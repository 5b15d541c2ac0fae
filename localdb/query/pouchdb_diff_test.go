package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"slices"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// The values of TestFindAgreesWithPouchDB: strings are lowercase ASCII
// letters only, where ICU's collation (CouchDB's, ours) and pouchdb-find's
// code point order agree; numbers, booleans, null and arrays collate the
// same in both.
var (
	pouchWords  = []any{"apple", "applepie", "b", "banana", "cherry", "zeta", ""}
	pouchValues = []any{0, 1, 3, 5, 7, 2.5, "3", "apple", "b", "banana", "z", nil, true, false, []any{1, 2}}
	// Documents hold no null: pouchdb-find takes a null field for a
	// missing one ({"n": {"$nin": [...]}} leaves it out), where CouchDB
	// compares null as a value.
	pouchDocValues = slices.DeleteFunc(slices.Clone(pouchValues), func(v any) bool { return v == nil })
)

// pouchDocBody gives every document every field the queries read:
// pouchdb-find takes a missing field for null (so {"s": {"$lte": 7}}
// matches a document without s, and a sort lists it), where CouchDB
// matches nothing but $exists false. The brute-force test covers missing
// fields.
func pouchDocBody(r *rand.Rand) map[string]any {
	m := map[string]any{}
	if r.Intn(10) < 6 {
		m["n"] = r.Intn(8)
	} else {
		m["n"] = pouchDocValues[r.Intn(len(pouchDocValues))]
	}
	m["s"] = pouchWords[r.Intn(len(pouchWords))]
	m["t"] = []string{"a", "b"}[r.Intn(2)]
	m["o"] = map[string]any{"x": r.Intn(4)}
	m["tags"] = []any{"red", "green", "blue"}[:r.Intn(4)]
	return m
}

func pouchCond(r *rand.Rand, depth int) map[string]any {
	field := []string{"n", "n", "s", "s", "t", "o.x", "_id", "tags"}[r.Intn(8)]
	v := func() any { return pouchValues[r.Intn(len(pouchValues))] }
	var c any
	switch r.Intn(16) {
	case 0:
		c = v()
	case 1:
		c = map[string]any{"$eq": v()}
	case 2:
		c = map[string]any{"$gt": v()}
	case 3:
		c = map[string]any{"$gte": v(), "$lt": v()}
	case 4:
		c = map[string]any{"$lte": v()}
	case 5:
		c = map[string]any{"$ne": v()}
	case 6:
		c = map[string]any{"$in": []any{v(), v()}}
	case 7:
		c = map[string]any{"$nin": []any{v(), v()}}
	case 8:
		c = map[string]any{"$exists": r.Intn(2) == 0}
	case 9:
		c = map[string]any{"$type": []string{"number", "string", "null", "boolean", "array"}[r.Intn(5)]}
	case 10:
		c = map[string]any{"$regex": "^[ab]"}
	case 11:
		c = map[string]any{"$elemMatch": map[string]any{"$eq": "red"}}
	case 12:
		c = map[string]any{"$size": r.Intn(3)}
	case 13:
		c = map[string]any{"$mod": []any{3, r.Intn(3)}}
	case 14:
		if depth < 1 {
			return map[string]any{"$or": []any{pouchCond(r, depth+1), pouchCond(r, depth+1)}}
		}
		c = v()
	default:
		c = map[string]any{"$not": map[string]any{"$lt": v()}}
	}
	return map[string]any{field: c}
}

// TestFindAgreesWithPouchDB loads the same random documents and indexes
// into our store and into pouchdb-server (its _find is pouchdb-find), runs
// random selectors on both, and wants the same documents wherever both
// answer: as sets (the two break ties of a sort differently), and, with a
// sort, both in the sort's order by CouchDB's collation. A query one side
// refuses (pouchdb-find cannot sort without an index on the sort fields;
// we answer no_usable_index where CouchDB does) is not compared, but most
// must be.
func TestFindAgreesWithPouchDB(t *testing.T) {
	srv := testpeer.PouchDB(t)
	remote := srv.CreateDB(t, "find")
	db := localdbtest.Open(t)
	r := rand.New(rand.NewSource(42))

	var docs []any
	byID := map[string]map[string]any{}
	for i := 0; i < 160; i++ {
		body := pouchDocBody(r)
		b, _ := json.Marshal(body)
		id := fmt.Sprintf("d%03d", i)
		if _, err := db.Put(bg, &couchdoc.Doc{ID: id, Body: b}); err != nil {
			t.Fatal(err)
		}
		body["_id"] = id
		docs = append(docs, body)
		byID[id] = body
	}
	if st := postJSON(t, remote+"/_bulk_docs", map[string]any{"docs": docs}, nil); st != http.StatusCreated {
		t.Fatalf("pouchdb-server _bulk_docs: %d", st)
	}
	for _, ix := range []string{
		`{"index": {"fields": ["n"]}, "ddoc": "i1", "name": "n"}`,
		`{"index": {"fields": ["s"]}, "ddoc": "i2", "name": "s"}`,
		`{"index": {"fields": ["n", "s"]}, "ddoc": "i3", "name": "n-s"}`,
		`{"index": {"fields": ["t", "n"]}, "ddoc": "i4", "name": "t-n"}`,
		`{"index": {"fields": ["o.x"]}, "ddoc": "i6", "name": "ox"}`,
	} {
		createIndex(t, db, ix)
		var v any
		_ = json.Unmarshal([]byte(ix), &v)
		if st := postJSON(t, remote+"/_index", v, nil); st != http.StatusOK {
			t.Fatalf("pouchdb-server _index %s: %d", ix, st)
		}
	}

	sorts := []any{nil, nil, []any{"n"}, []any{map[string]any{"n": "desc"}}, []any{"s"},
		[]any{"t", "n"}, []any{"_id"}, []any{map[string]any{"_id": "desc"}}, []any{"o.x"}}
	n := 400
	if raceEnabled || testing.Short() {
		n = 120
	}
	compared, refused := 0, 0
	for i := 0; i < n; i++ {
		var conds []any
		for k := r.Intn(2) + 1; k > 0; k-- {
			conds = append(conds, pouchCond(r, 0))
		}
		q := map[string]any{"limit": 1000}
		var sortFields []mango.SortField
		if s := sorts[r.Intn(len(sorts))]; s != nil {
			q["sort"] = s
			sortFields, _ = mango.ParseSort(s)
			// Both need the sort's fields in the selector to sort with an
			// index; $gt null holds for every value.
			for _, f := range sortFields {
				conds = append(conds, map[string]any{f.Field: map[string]any{"$gt": nil}})
			}
		}
		q["selector"] = map[string]any{"$and": conds}
		if len(conds) == 1 {
			q["selector"] = conds[0]
		}
		body, _ := json.Marshal(q)
		ours, err := query.Find(bg, db, body)
		var theirs struct {
			Docs []map[string]any `json:"docs"`
		}
		status := postJSON(t, remote+"/_find", q, &theirs)
		if err != nil || status != http.StatusOK {
			var ce *couchdoc.Error
			if err != nil && (!asCouch(err, &ce) || ce.Name != "no_usable_index") {
				t.Fatalf("%s: %v", body, err)
			}
			refused++
			if testing.Verbose() {
				t.Logf("refused: ours %v, pouchdb %d: %s", err, status, body)
			}
			continue
		}
		compared++
		got := ids(t, ours)
		var want []string
		for _, d := range theirs.Docs {
			want = append(want, d["_id"].(string))
		}
		if a, b := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want)); !slices.Equal(a, b) {
			var only []any
			for _, id := range symmetricDiff(a, b) {
				only = append(only, byID[id])
			}
			t.Fatalf("%s\nours       %v\npouchdb's  %v\nin one answer only: %v", body, a, b, only)
		}
		if len(sortFields) > 0 {
			checkSorted(t, body, "ours", decodeDocs(t, ours), sortFields)
			checkSorted(t, body, "pouchdb's", theirs.Docs, sortFields)
		}
	}
	t.Logf("%d queries compared with pouchdb-server's _find, %d refused by one side", compared, refused)
	if compared < n*2/3 {
		t.Fatalf("only %d of %d queries answered by both", compared, n)
	}
}

// checkSorted wants docs in the order of sort by CouchDB's collation.
func checkSorted(t *testing.T, q []byte, who string, docs []map[string]any, sort []mango.SortField) {
	t.Helper()
	for i := 1; i < len(docs); i++ {
		for _, f := range sort {
			a, _ := mango.Lookup(docs[i-1], f.Field)
			b, _ := mango.Lookup(docs[i], f.Field)
			c := mango.Compare(a, b)
			if f.Desc {
				c = -c
			}
			if c < 0 {
				break
			}
			if c > 0 {
				t.Fatalf("%s: %s answer out of order at %d: %v then %v", q, who, i, docs[i-1], docs[i])
			}
		}
	}
}

func decodeDocs(t *testing.T, res *query.Result) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range res.Docs {
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// postJSON posts v and decodes a 2xx answer into out; it returns the
// status.
func postJSON(t *testing.T, url string, v any, out any) int {
	t.Helper()
	b, _ := json.Marshal(v)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode
	}
	if out != nil {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			t.Fatalf("%s: %v: %s", url, err, data)
		}
	}
	return resp.StatusCode
}

func symmetricDiff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}
