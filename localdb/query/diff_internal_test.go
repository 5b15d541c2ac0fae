package query

import (
	"reflect"
	"testing"
)

func TestDiffRows(t *testing.T) {
	rows := func(spec ...string) []liveRow {
		var out []liveRow
		for _, s := range spec {
			out = append(out, liveRow{id: s[:1], rev: s[1:]})
		}
		return out
	}
	got := diffRows(rows("a1", "b1", "c1", "d1", "e1"), rows("b1", "c1", "a1", "x1", "e2", "d1"))
	want := []RowChange{
		{Kind: "moved", ID: "a", Index: 2, OldIndex: 0},
		{Kind: "added", ID: "x", Index: 3, OldIndex: -1},
		{Kind: "changed", ID: "e", Index: 4, OldIndex: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diff %+v", got)
	}
	got = diffRows(rows("a1", "b1"), rows("b1"))
	if !reflect.DeepEqual(got, []RowChange{{Kind: "removed", ID: "a", Index: -1, OldIndex: 0}}) {
		t.Fatalf("diff %+v", got)
	}
}
