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
	case nil, bool:
		return strings.Compare(atomName(a), atomName(b))
	}
	if c, ok := compareComposite(a, b, CompareRaw); ok {
		return c
	}
	return compareNumbers(a, b)
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
