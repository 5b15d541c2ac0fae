package mango

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Values handled here are what encoding/json produces with UseNumber: nil,
// bool, json.Number (or float64), string, []any and map[string]any.

// typeRank orders JSON types the way CouchDB's view collation does:
// null < false < true < numbers < strings < arrays < objects.
func typeRank(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 2
		}
		return 1
	case json.Number, float64, int, int64:
		return 3
	case string:
		return 4
	case []any:
		return 5
	case map[string]any:
		return 6
	}
	return 7
}

// toFloat returns a number's value; ok is false for non-numbers.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			// Out of float64 range: keep the sign, which is what matters
			// for ordering.
			if len(x) > 0 && x[0] == '-' {
				return math.Inf(-1), true
			}
			return math.Inf(1), true
		}
		return f, true
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// toInt returns an integral number's value; ok is false for anything else.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i, true
		}
		f, err := x.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return 0, false
		}
		return int64(f), true
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return 0, false
		}
		return int64(x), true
	case int:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// Compare orders two JSON values with CouchDB's collation across types.
// Within a type: numbers by value, strings by an approximation of ICU's
// root collation (see icu.go; PouchDB compares code points instead), arrays
// element by element then by length, objects key by key (keys sorted by
// bytes, compared by bytes) then by size. It returns -1, 0 or +1.
func Compare(a, b any) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch x := a.(type) {
	case json.Number, float64, int, int64:
		return compareNumbers(a, b)
	case string:
		return collateStrings(x, b.(string))
	}
	c, _ := compareComposite(a, b, Compare)
	return c
}

// compareNumbers orders two numbers by value.
func compareNumbers(a, b any) int {
	fa, _ := toFloat(a)
	fb, _ := toFloat(b)
	switch {
	case fa < fb:
		return -1
	case fa > fb:
		return 1
	}
	return 0
}

// compareComposite orders two arrays, or two objects, comparing their
// members with elem: arrays element by element then by length, objects
// key by key (keys sorted and compared by bytes, then their values) then
// by size. ok is false when a is neither.
func compareComposite(a, b any, elem func(a, b any) int) (c int, ok bool) {
	switch x := a.(type) {
	case []any:
		y := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := elem(x[i], y[i]); c != 0 {
				return c, true
			}
		}
		return cmpInt(len(x), len(y)), true
	case map[string]any:
		y := b.(map[string]any)
		kx, ky := sortedKeys(x), sortedKeys(y)
		for i := 0; i < len(kx) && i < len(ky); i++ {
			if c := strings.Compare(kx[i], ky[i]); c != 0 {
				return c, true
			}
			if c := elem(x[kx[i]], y[ky[i]]); c != 0 {
				return c, true
			}
		}
		return cmpInt(len(kx), len(ky)), true
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
