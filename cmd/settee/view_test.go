package main

import (
	"fmt"
	"path/filepath"
	"strings"
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

// TestPushFilter: a push that names a filter runs the local store's
// design document filter, with --query-param as req.query.
func TestPushFilter(t *testing.T) {
	dir := t.TempDir()
	root := serveBinary(t, filepath.Join(dir, "hub"), nil)
	db := filepath.Join(dir, "phone.db")
	ok(t, "put", db, `{"_id":"_design/app","filters":{"by_type":"function (doc, req) { return doc.type === req.query.type; }"}}`)
	for i, typ := range []string{"note", "task", "note", "task"} {
		ok(t, "put", db, fmt.Sprintf(`{"_id":"d%d","type":%q}`, i, typ))
	}
	ok(t, "push", "--create-target", "--filter", "app/by_type", "--query-param", "type=task", db, root+"/tasks")
	pulled := filepath.Join(dir, "laptop.db")
	ok(t, "pull", pulled, root+"/tasks")
	var got []string
	for _, line := range strings.Fields(ok(t, "changes", pulled)) {
		if strings.Contains(line, `"id"`) {
			got = append(got, line)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], `"d1"`) || !strings.Contains(got[1], `"d3"`) {
		t.Fatalf("pushed with --filter type=task:\n%s", strings.Join(got, "\n"))
	}
}
