package mango

import (
	"encoding/json"
	"testing"
)

// TestCompareRaw checks Erlang's term order on jiffy terms, as CouchDB's
// mango_json:cmp_raw sees them.
func TestCompareRaw(t *testing.T) {
	ordered := []any{json.Number("-1"), 0.5, json.Number("2"), false, nil, true,
		map[string]any{}, map[string]any{"a": 1.0}, []any{}, []any{"a"}, []any{"a", "b"}, []any{"b"},
		"", "Z", "a", "doc-0200", "doc-0201", "~", "ü"}
	for i, a := range ordered {
		for j, b := range ordered {
			want := cmpInt(i, j)
			if got := CompareRaw(a, b); got != want {
				t.Errorf("CompareRaw(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
	if CompareRaw(json.Number("1"), 1.0) != 0 {
		t.Error("1 and 1.0 differ")
	}
}
