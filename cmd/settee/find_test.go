package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestFindAndIndex(t *testing.T) {
	db := filepath.Join(t.TempDir(), "shop.db")
	for _, d := range []string{`{"_id":"o1","customer":"c1","when":3}`, `{"_id":"o2","customer":"c2","when":1}`, `{"_id":"o3","customer":"c1","when":2}`} {
		ok(t, "put", db, d)
	}
	q := `{"selector": {"customer": "c1"}, "sort": ["customer", "when"], "fields": ["_id"]}`
	failsWith(t, cli(t, nil, "find", db, q), exitUsage, "no_usable_index")
	var created struct{ Result, ID, Name string }
	mustJSON(t, ok(t, "index", "create", db, `{"index": {"fields": ["customer", "when"]}, "ddoc": "orders", "name": "by-customer"}`), &created)
	if created.Result != "created" || created.ID != "_design/orders" || created.Name != "by-customer" {
		t.Fatalf("index create = %+v", created)
	}
	var res struct {
		Docs     []map[string]string `json:"docs"`
		Bookmark string              `json:"bookmark"`
		Warning  string              `json:"warning"`
	}
	mustJSON(t, ok(t, "find", db, q), &res)
	if len(res.Docs) != 2 || res.Docs[0]["_id"] != "o3" || res.Docs[1]["_id"] != "o1" || res.Warning != "" {
		t.Fatalf("find = %+v", res)
	}
	if out := ok(t, "find", db, q, "--explain"); !strings.Contains(out, `"by-customer"`) {
		t.Fatalf("explain:\n%s", out)
	}
	var list struct {
		TotalRows int `json:"total_rows"`
	}
	mustJSON(t, ok(t, "index", "list", db), &list)
	if list.TotalRows != 2 {
		t.Fatalf("index list: %d rows", list.TotalRows)
	}
	ok(t, "index", "delete", db, "orders", "by-customer")
	failsWith(t, cli(t, nil, "index", "delete", db, "orders", "by-customer"), exitNotFound, "not_found")
	failsWith(t, cli(t, nil, "index", "drop", db), exitUsage, "usage: settee index")
	failsWith(t, cli(t, nil, "find", db, `{"selector": 1}`), exitUsage, "invalid_selector_json")
}
