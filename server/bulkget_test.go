package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"testing"
)

// TestBulkGetBatchSameAsOneByOne checks the batched _bulk_get (runs read
// with OpenRevsBatch) against answering each item alone with bulkGetOne,
// over a random mix of conflicts, deletions, missing docs and revisions,
// the same id several times in a row, items without rev and bad revs,
// more items than one read group holds, with and without latest.
func TestBulkGetBatchSameAsOneByOne(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	var docs []any
	for i := range 150 {
		id := fmt.Sprintf("d%03d", i)
		docs = append(docs, branchDoc(id, i%7 == 0, map[string]any{"n": i, "pad": bytes.Repeat([]byte("x"), i*40)}, fmt.Sprintf("%03xb", i), "aaa1"))
		if i%3 == 0 {
			docs = append(docs, branchDoc(id, false, map[string]any{"n": -i}, fmt.Sprintf("%03xc", i), "aaa1"))
		}
	}
	ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"new_edits": false, "docs": docs})
	db, err := ts.s.dbs.get(context.Background(), "db")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 6 {
		var items []bulkGetItem
		for range 300 {
			i := rng.IntN(160) // past 150: no such doc
			id := fmt.Sprintf("d%03d", i)
			var rev string
			switch rng.IntN(8) {
			case 0:
				rev = "1-aaa1" // an ancestor: with latest, the leaves
			case 1:
				rev = fmt.Sprintf("2-%03xc", i)
			case 2:
				rev = "9-fff"
			case 3:
				rev = "" // the winner
			case 4:
				rev = "bad"
			default:
				rev = fmt.Sprintf("2-%03xb", i)
			}
			item := bulkGetItem{ID: id, Rev: rev}
			if rng.IntN(5) == 0 {
				item.AttsSince = []string{"1-aaa1"}
			}
			items = append(items, item)
			if rng.IntN(4) == 0 { // the same id again, right after
				items = append(items, bulkGetItem{ID: id, Rev: "1-aaa1"})
			}
		}
		query := "revs=true"
		if round%2 == 1 {
			query += "&latest=true"
		}
		r := ts.must(200, "POST", "/db/_bulk_get?"+query, map[string]any{"docs": items})

		// The answer of each item alone, by the one-item path.
		req := httptest.NewRequest("POST", "/db/_bulk_get?"+query, nil)
		q := newQuery(req.URL)
		base := bulkGetOptions(q)
		var want bytes.Buffer
		want.WriteString(`{"results":[`)
		rec := httptest.NewRecorder()
		for i, item := range items {
			if i > 0 {
				rec.Body.WriteString(",")
			}
			docs, errs := ts.s.bulkGetOne(req, db, item, base)
			if err := writeBulkGetJSON(rec, item, docs, errs); err != nil {
				t.Fatal(err)
			}
		}
		want.Write(rec.Body.Bytes())
		want.WriteString("]}")
		var got, exp any
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := json.Unmarshal(want.Bytes(), &exp); err != nil {
			t.Fatalf("round %d: reference: %v", round, err)
		}
		g, _ := json.Marshal(got)
		e, _ := json.Marshal(exp)
		if !bytes.Equal(g, e) {
			t.Fatalf("round %d: batched _bulk_get differs from one by one\n got %.600s\nwant %.600s", round, g, e)
		}
	}
}
