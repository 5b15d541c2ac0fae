package query_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/viewstore"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// TestViewChunksMatchRows: answers read with the view files' chunk
// records are the answers read from rows alone, over random documents
// (numbers, and values _sum and _stats must see one by one), random
// writes between queries and random queries, with chunks of a few rows.
func TestViewChunksMatchRows(t *testing.T) {
	defer viewstore.SetChunkRows(3)()
	db := localdbtest.Open(t)
	put(t, db, "_design/c", `{"views":{
		"count":{"map":"function (doc) { emit([doc.g, doc.h], doc.v); }","reduce":"_count"},
		"sum":{"map":"function (doc) { emit([doc.g, doc.h], doc.v); }","reduce":"_sum"},
		"stats":{"map":"function (doc) { if (typeof doc.v === 'number') emit([doc.g, doc.h], doc.v); }","reduce":"_stats"},
		"js":{"map":"function (doc) { emit(doc.g, 1); }","reduce":"function (k, v, re) { return sum(v); }"},
		"distinct":{"map":"function (doc) { emit([doc.g, doc.h], doc.v); }","reduce":"_approx_count_distinct"},
		"distinct1":{"map":"function (doc) { emit(doc.v, doc.h); }","reduce":"_approx_count_distinct"}}}`)
	r := rand.New(rand.NewPCG(9, 9))
	value := func() string {
		switch r.IntN(30) {
		case 0:
			return `{"a":1}`
		case 1:
			return `[1,2]`
		}
		return fmt.Sprint(float64(r.IntN(200)-50) / 2)
	}
	revs := map[string]string{}
	write := func(n int) {
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("d%03d", r.IntN(300))
			body := fmt.Sprintf(`{"g":%d,"h":%d,"v":%s}`, r.IntN(6), r.IntN(4), value())
			rev, err := db.Put(bg, &couchdoc.Doc{ID: id, Rev: revs[id], Body: json.RawMessage(body)})
			if err != nil {
				t.Fatal(err)
			}
			revs[id] = rev
		}
	}
	write(300)
	for round := 0; round < 8; round++ {
		for q := 0; q < 40; q++ {
			view := []string{"count", "sum", "stats", "js", "distinct", "distinct1"}[r.IntN(6)]
			opts := map[string]any{}
			switch r.IntN(4) {
			case 0:
				opts["group_level"] = 1 + r.IntN(2)
			case 1:
				opts["group"] = true
			case 2:
				opts["reduce"] = false
			}
			lo, hi := r.IntN(6), r.IntN(6)
			if lo > hi {
				lo, hi = hi, lo
			}
			start, end := []any{lo, r.IntN(4)}, []any{hi}
			if r.IntN(2) == 0 {
				end = append(end, map[string]any{})
			}
			var startKey, endKey any = start, end
			if view == "js" {
				startKey, endKey = []any{lo}, []any{hi}
			}
			if view == "distinct1" {
				startKey, endKey = lo*10-20, hi*10-20
			}
			if r.IntN(2) == 0 {
				opts["descending"] = true
				startKey, endKey = endKey, startKey
			}
			if r.IntN(4) > 0 {
				opts["startkey"], opts["endkey"] = startKey, endKey
			}
			if r.IntN(3) == 0 {
				opts["skip"] = r.IntN(5)
			}
			if r.IntN(3) == 0 {
				opts["limit"] = r.IntN(10)
			}
			if r.IntN(3) == 0 {
				opts["inclusive_end"] = false
			}
			body, _ := json.Marshal(opts)
			var answers [2]string
			for i, on := range []bool{true, false} {
				restore := query.SetViewChunks(on)
				o, err := query.ViewOptionsFromJSON(body)
				if err != nil {
					t.Fatal(err)
				}
				res, err := query.View(bg, db, "c", view, o)
				restore()
				if err != nil {
					answers[i] = "error: " + err.Error()
					continue
				}
				b, _ := json.Marshal(res)
				answers[i] = string(b)
			}
			if answers[0] != answers[1] {
				t.Fatalf("%s %s:\n chunks %s\n rows   %s", view, body, answers[0], answers[1])
			}
		}
		write(60)
	}
}
