package query_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/query"
)

// TestCoveringIndex: when an index holds every field a query returns and
// its selector names, CouchDB 3.5 reads no document (mango_cursor_view's
// covering index): it counts none examined, so it gives no scan warning,
// and its _explain says covering with include_docs false. The answer is
// the same documents either way.
func TestCoveringIndex(t *testing.T) {
	db := localdbTestOpen(t)
	createIndex(t, db, `{"index": {"fields": ["type", "n"]}, "ddoc": "c", "name": "type-n"}`)
	for i := 0; i < 40; i++ {
		body := fmt.Sprintf(`{"type": "%s", "n": %d, "other": %d}`, []string{"task", "note"}[i%2], i, i%4)
		if _, err := db.Put(bg, &couchdoc.Doc{ID: fmt.Sprintf("d%02d", i), Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		q        string
		covering bool
		docs     int
	}{
		{`{"selector": {"type": "task", "n": {"$gt": 0}}, "fields": ["_id", "n"]}`, true, 19},
		{`{"selector": {"type": "task", "n": {"$gt": 0}}, "fields": []}`, false, 19},
		{`{"selector": {"type": "task", "n": {"$gt": 0}}, "fields": ["_id", "_rev"]}`, false, 19},
		// The selector names a field the index lacks: documents are read.
		{`{"selector": {"type": "task", "n": {"$gt": 0}, "other": 2}, "fields": ["_id"]}`, false, 10},
		{`{"selector": {"type": "task", "n": {"$gt": 0}, "$or": [{"n": 2}, {"n": 4}]}, "fields": ["n"]}`, true, 2},
	}
	for _, c := range cases {
		res := find(t, db, c.q[:len(c.q)-1]+`, "execution_stats": true}`)
		if len(res.Docs) != c.docs {
			t.Errorf("%s: %d docs, want %d", c.q, len(res.Docs), c.docs)
		}
		examined := res.Stats.TotalDocsExamined
		if c.covering && examined != 0 || !c.covering && examined != res.Stats.TotalKeysExamined {
			t.Errorf("%s: %d docs examined of %d keys (covering %v)", c.q, examined, res.Stats.TotalKeysExamined, c.covering)
		}
		ex, err := query.Explain(bg, db, "db", []byte(c.q))
		if err != nil {
			t.Fatal(err)
		}
		mr := ex["mrargs"].(map[string]any)
		if ex["covering"] != c.covering || mr["include_docs"] != !c.covering {
			t.Errorf("%s: explain covering %v include_docs %v", c.q, ex["covering"], mr["include_docs"])
		}
	}
	// fields [] is every field, as in CouchDB.
	res := find(t, db, `{"selector": {"type": "note", "n": 1}, "fields": []}`)
	var doc map[string]any
	if len(res.Docs) != 1 || json.Unmarshal(res.Docs[0], &doc) != nil || doc["other"] != 1.0 || doc["_rev"] == nil {
		t.Fatalf("fields [] gave %s", res.Docs)
	}
}
