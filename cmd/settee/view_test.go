package main

import (
	"path/filepath"
	"testing"
)

func TestView(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shop.db")
	ok(t, "put", db, `{"_id":"_design/orders","views":{"by_customer":{"map":"function (doc) { if (doc.customer) emit(doc.customer, doc.total); }","reduce":"_sum"}}}`)
	for _, d := range []string{`{"_id":"o1","customer":"c1","total":3}`, `{"_id":"o2","customer":"c2","total":1}`, `{"_id":"o3","customer":"c1","total":2}`} {
		ok(t, "put", db, d)
	}
	var grouped struct {
		Rows []struct {
			Key   string  `json:"key"`
			Value float64 `json:"value"`
		} `json:"rows"`
	}
	mustJSON(t, ok(t, "view", db, "orders/by_customer", `{"group": true}`), &grouped)
	if len(grouped.Rows) != 2 || grouped.Rows[0].Key != "c1" || grouped.Rows[0].Value != 5 || grouped.Rows[1].Value != 1 {
		t.Fatalf("grouped = %+v", grouped)
	}
	var rows struct {
		Total int `json:"total_rows"`
		Rows  []struct {
			ID  string         `json:"id"`
			Doc map[string]any `json:"doc"`
		} `json:"rows"`
	}
	mustJSON(t, ok(t, "view", db, "orders/by_customer", `{"reduce": false, "key": "c1", "include_docs": true}`), &rows)
	if rows.Total != 3 || len(rows.Rows) != 2 || rows.Rows[0].ID != "o1" || rows.Rows[1].Doc["total"] != 2.0 {
		t.Fatalf("rows = %+v", rows)
	}
	failsWith(t, cli(t, nil, "view", db, "orders"), exitUsage, "DDOC/VIEW")
	failsWith(t, cli(t, nil, "view", db, "orders/by_customer", `{"limit": -1}`), exitUsage, "query_parse_error")
}
