package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

var diffIndexes = []string{
	`{"index": {"fields": ["n"]}, "ddoc": "i1", "name": "n"}`,
	`{"index": {"fields": ["s"]}, "ddoc": "i2", "name": "s"}`,
	`{"index": {"fields": ["n", "s"]}, "ddoc": "i3", "name": "n-s"}`,
	`{"index": {"fields": ["t", "n"]}, "ddoc": "i4", "name": "t-n"}`,
	`{"index": {"fields": [{"s": "desc"}]}, "ddoc": "i5", "name": "s-desc"}`,
	`{"index": {"fields": ["o.x"]}, "ddoc": "i6", "name": "ox"}`,
	`{"index": {"fields": ["n"], "partial_filter_selector": {"t": "a"}}, "ddoc": "i7", "name": "n-partial"}`,
	`{"index": {"fields": ["_id"]}, "ddoc": "i8", "name": "id"}`,
}

func randDocBody(r *rand.Rand) map[string]any {
	m := map[string]any{}
	switch k := r.Intn(10); {
	case k < 6:
		m["n"] = r.Intn(8)
	case k < 7:
		m["n"] = []string{"3", "x", "X"}[r.Intn(3)]
	case k < 8:
		m["n"] = []any{nil, true, 2.5, []any{1, 2}}[r.Intn(4)]
	}
	if r.Intn(5) > 0 {
		m["s"] = []string{"apple", "Apple", "banana", "b", "B", "cherry", "", "apple pie", "zeta", "é"}[r.Intn(10)]
	}
	if r.Intn(4) > 0 {
		m["t"] = []string{"a", "b"}[r.Intn(2)]
	}
	if r.Intn(3) == 0 {
		m["o"] = map[string]any{"x": r.Intn(4)}
	}
	if r.Intn(4) == 0 {
		m["tags"] = []any{"red", "green", "blue"}[:r.Intn(4)]
	}
	return m
}

func randValue(r *rand.Rand) any {
	return []any{0, 1, 3, 5, 7, 2.5, "3", "apple", "b", "B", "banana", "z", nil, true, []any{1, 2}}[r.Intn(15)]
}

func randCond(r *rand.Rand) map[string]any {
	field := []string{"n", "n", "s", "s", "t", "o.x", "_id", "tags"}[r.Intn(8)]
	var c any
	switch r.Intn(14) {
	case 0:
		c = randValue(r)
	case 1:
		c = map[string]any{"$eq": randValue(r)}
	case 2:
		c = map[string]any{"$gt": randValue(r)}
	case 3:
		c = map[string]any{"$gte": randValue(r), "$lt": randValue(r)}
	case 4:
		c = map[string]any{"$lte": randValue(r)}
	case 5:
		c = map[string]any{"$ne": randValue(r)}
	case 6:
		c = map[string]any{"$in": []any{randValue(r), randValue(r)}}
	case 7:
		c = map[string]any{"$exists": r.Intn(2) == 0}
	case 8:
		c = map[string]any{"$type": []string{"number", "string", "null"}[r.Intn(3)]}
	case 9:
		c = map[string]any{"$regex": "^[ab]"}
	case 10:
		c = map[string]any{"$beginsWith": "app"}
	case 11:
		return map[string]any{"$or": []any{randCond(r), randCond(r)}}
	case 12:
		c = map[string]any{"$elemMatch": map[string]any{"$eq": "red"}}
	default:
		c = map[string]any{"$not": map[string]any{"$lt": randValue(r)}}
	}
	return map[string]any{field: c}
}

func randQuery(r *rand.Rand) map[string]any {
	var conds []any
	for i := r.Intn(3) + 1; i > 0; i-- {
		conds = append(conds, randCond(r))
	}
	q := map[string]any{"selector": map[string]any{"$and": conds}}
	if len(conds) == 1 {
		q["selector"] = conds[0]
	}
	sorts := []any{nil, []any{"n"}, []any{map[string]any{"n": "desc"}}, []any{"s"}, []any{map[string]any{"s": "desc"}},
		[]any{"t", "n"}, []any{"_id"}, []any{map[string]any{"_id": "desc"}}, []any{"n", "s"}, []any{"o.x"}}
	if s := sorts[r.Intn(len(sorts))]; s != nil {
		q["sort"] = s
	}
	if r.Intn(2) == 0 {
		q["limit"] = r.Intn(10)
	} else {
		q["limit"] = 1000
	}
	if r.Intn(3) == 0 {
		q["skip"] = r.Intn(5)
	}
	return q
}

type liveDoc struct {
	id  string
	doc map[string]any // decoded, with _id and _rev
}

func liveDocs(t *testing.T, db *localdb.DB) []liveDoc {
	t.Helper()
	var out []liveDoc
	_, err := db.AllDocs(bg, localdb.AllDocsOptions{IncludeDocs: true}, func(row *localdb.AllDocsRow) error {
		dec := json.NewDecoder(bytes.NewReader(row.Doc.Body))
		dec.UseNumber()
		m := map[string]any{}
		if err := dec.Decode(&m); err != nil {
			return err
		}
		m["_id"], m["_rev"] = row.ID, row.Rev
		out = append(out, liveDoc{row.ID, m})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// expected evaluates a query by brute force over every live document
// (design documents aside), in
// the order of the index the plan reads (its columns, then _id; _all_docs:
// _id), as CouchDB answers.
func expected(docs []liveDoc, q map[string]any, ix *mango.Index) []string {
	sel, err := mango.ParseValue(q["selector"])
	if err != nil {
		panic(err)
	}
	var sortFields []mango.SortField
	if s, ok := q["sort"]; ok {
		sortFields, _ = mango.ParseSort(s)
	}
	var keep []liveDoc
	for _, d := range docs {
		if !sel.Match(d.doc) || mango.IsDesignID(d.id) {
			continue
		}
		if ix != nil {
			if _, ok := ix.Entry(nil, d.doc); !ok {
				continue
			}
		}
		ok := true
		for _, f := range sortFields {
			if _, found := mango.Lookup(d.doc, f.Field); !found {
				ok = false
			}
		}
		if ok {
			keep = append(keep, d)
		}
	}
	var cols []string
	if ix != nil {
		cols = ix.Columns()
	}
	sort.SliceStable(keep, func(i, j int) bool {
		for _, c := range cols {
			a, _ := mango.Lookup(keep[i].doc, c)
			b, _ := mango.Lookup(keep[j].doc, c)
			if x := mango.Compare(a, b); x != 0 {
				return x < 0
			}
		}
		return keep[i].id < keep[j].id
	})
	if len(sortFields) > 0 && sortFields[0].Desc {
		for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
			keep[i], keep[j] = keep[j], keep[i]
		}
	}
	out := []string{}
	skip, _ := q["skip"].(int)
	limit := q["limit"].(int)
	for _, d := range keep {
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, d.id)
	}
	return out
}

// TestFindMatchesBruteForce runs random queries, each with the planner's
// choice and with use_index naming every index, and checks the answer
// against a brute-force evaluation; writes change the data between rounds.
func TestFindMatchesBruteForce(t *testing.T) {
	db := localdbtest.Open(t)
	r := rand.New(rand.NewSource(15))
	revs := map[string]string{}
	write := func(n int) {
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("d%03d", r.Intn(150))
			if revs[id] != "" && r.Intn(5) == 0 {
				if _, err := db.Delete(bg, id, revs[id]); err != nil {
					t.Fatal(err)
				}
				revs[id] = ""
				continue
			}
			b, _ := json.Marshal(randDocBody(r))
			rev, err := db.Put(bg, &couchdoc.Doc{ID: id, Rev: revs[id], Body: b})
			if err != nil {
				t.Fatal(err)
			}
			revs[id] = rev
		}
	}
	write(100)
	for _, ix := range diffIndexes[:4] {
		createIndex(t, db, ix)
	}
	write(100)
	for _, ix := range diffIndexes[4:] {
		createIndex(t, db, ix)
	}
	uses := []any{nil}
	for _, ix := range db.Indexes() {
		uses = append(uses, []any{ix.DDoc, ix.Name})
	}
	queries, used := 0, map[string]int{}
	for round := 0; round < 6; round++ {
		if round == 3 {
			// Without the _id index, _all_docs serves what it can.
			if err := query.DeleteIndex(bg, db, "i8", "id"); err != nil {
				t.Fatal(err)
			}
			uses = uses[:len(uses)-1]
		}
		write(60)
		if err := db.CheckInvariants(bg); err != nil {
			t.Fatal(err)
		}
		docs := liveDocs(t, db)
		perRound := 120
		if raceEnabled || testing.Short() {
			perRound = 30
		}
		for i := 0; i < perRound; i++ {
			q := randQuery(r)
			for _, u := range uses {
				if u != nil {
					q["use_index"] = u
				} else {
					delete(q, "use_index")
				}
				body, _ := json.Marshal(q)
				ex, err := query.Explain(bg, db, "db", body)
				res, ferr := query.Find(bg, db, body)
				if err != nil || ferr != nil {
					var ce *couchdoc.Error
					if !reflect.DeepEqual(err, ferr) || !asCouch(ferr, &ce) || ce.Name != "no_usable_index" {
						t.Fatalf("%s: explain %v, find %v", body, err, ferr)
					}
					continue
				}
				queries++
				info := ex["index"].(query.IndexInfo)
				used[info.Name]++
				var ix *mango.Index
				if info.DDoc != nil {
					for _, x := range db.Indexes() {
						if x.DDoc == *info.DDoc && x.Name == info.Name {
							ix = x
						}
					}
				}
				want := expected(docs, q, ix)
				if got := ids(t, res); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s\nindex %s\ngot  %v\nwant %v", body, info.Name, got, want)
				}
				if u != nil && (info.DDoc == nil || *info.DDoc != u.([]any)[0]) && !strings.Contains(res.Warning, "was not used") {
					t.Fatalf("%s: use_index not followed, without a warning", body)
				}
			}
		}
	}
	t.Logf("%d queries, by index: %v", queries, used)
	if len(used) < 9 {
		t.Fatalf("only %d indexes were exercised: %v", len(used), used)
	}
}

func asCouch(err error, ce **couchdoc.Error) bool {
	e, ok := err.(*couchdoc.Error)
	*ce = e
	return ok && strings.TrimSpace(e.Name) != ""
}
