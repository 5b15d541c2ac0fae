package mobile

import (
	"errors"
	"fmt"
	"testing"

	"github.com/settee/settee/localdb/query"
)

func TestQueryView(t *testing.T) {
	d := openTest(t)
	if _, err := d.Put(`{"_id": "_design/todo", "views": {"by_list": {"map": "function (doc) { if (doc.list) emit(doc.list, doc.pos); }", "reduce": "_sum"}}}`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if _, err := d.Put(fmt.Sprintf(`{"_id": "t%d", "list": "l%d", "pos": %d}`, i, i%2, i)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := d.Query("todo", "by_list", `{"group": true}`)
	if err != nil {
		t.Fatal(err)
	}
	rows := mustJSON(t, res)["rows"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["value"] != 6.0 || rows[1].(map[string]any)["value"] != 9.0 {
		t.Fatalf("grouped: %s", res)
	}
	res, err = d.Query("todo", "by_list", `{"reduce": false, "key": "l1", "include_docs": true, "limit": 2}`)
	if err != nil {
		t.Fatal(err)
	}
	m := mustJSON(t, res)
	rows = m["rows"].([]any)
	if m["total_rows"] != 6.0 || len(rows) != 2 || rows[0].(map[string]any)["doc"].(map[string]any)["_id"] != "t1" {
		t.Fatalf("rows: %s", res)
	}
	if _, err := d.Query("todo", "nope", ""); !errors.Is(err, query.ErrMissingView) {
		t.Fatalf("missing view: %v", err)
	}
	if _, err := d.Query("todo", "by_list", `{"limit": -1}`); err == nil {
		t.Fatal("a negative limit was taken")
	}
}
