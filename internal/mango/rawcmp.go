package mango

import "strings"

// CompareRaw orders JSON values as Erlang orders the terms jiffy decodes
// them to, which CouchDB's mango uses for the top-level _id field
// (mango_json:cmp_raw): numbers < null, true and false (atoms, by name:
// false < null < true) < objects < arrays < strings; strings by bytes,
// arrays element by element, objects by their members (here in key order,
// as decoded objects keep no member order).
func CompareRaw(a, b any) int {
	ra, rb := rawRank(a), rawRank(b)
	if ra != rb {
		return cmpInt(ra, rb)
	}
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case []any:
		y := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := CompareRaw(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(x), len(y))
	case map[string]any:
		y := b.(map[string]any)
		kx, ky := sortedKeys(x), sortedKeys(y)
		for i := 0; i < len(kx) && i < len(ky); i++ {
			if c := strings.Compare(kx[i], ky[i]); c != 0 {
				return c
			}
			if c := CompareRaw(x[kx[i]], y[ky[i]]); c != 0 {
				return c
			}
		}
		return cmpInt(len(kx), len(ky))
	case nil, bool:
		return strings.Compare(atomName(a), atomName(b))
	}
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

func rawRank(v any) int {
	switch v.(type) {
	case nil, bool:
		return 1
	case map[string]any:
		return 2
	case []any:
		return 3
	case string:
		return 4
	}
	return 0
}

func atomName(v any) string {
	switch v {
	case true:
		return "true"
	case false:
		return "false"
	}
	return "null"
}
