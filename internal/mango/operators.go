package mango

import (
	"fmt"
	"regexp"
	"strings"
)

func eqCond(arg any) cond { return eqCondWith(Compare, arg) }

func eqCondWith(cmp func(a, b any) int, arg any) cond {
	return func(v any, found bool) bool { return found && cmp(v, arg) == 0 }
}

var typeNames = map[string]int{"null": 0, "boolean": 1, "number": 3, "string": 4, "array": 5, "object": 6}

// badArg makes the SyntaxError of an operator's argument.
type badArg func(format string, a ...any) error

// compileOperator compiles one operator of a selector on the field at
// path ("" at the top level).
func compileOperator(op string, arg any, path string) (cond, error) {
	bad := func(format string, a ...any) error {
		return &SyntaxError{Path: path, Reason: op + ": " + fmt.Sprintf(format, a...)}
	}
	// As in CouchDB, the top-level _id compares by raw term order (ids by
	// bytes, as _all_docs orders them), everything else by collation.
	cmp := Compare
	if path == "_id" {
		cmp = CompareRaw
	}
	switch op {
	case "$eq":
		return eqCondWith(cmp, arg), nil
	case "$ne":
		return func(v any, found bool) bool { return found && cmp(v, arg) != 0 }, nil
	case "$gt", "$gte", "$lt", "$lte":
		return compareCond(cmp, op, arg), nil
	case "$in", "$nin", "$all":
		list, ok := arg.([]any)
		if !ok {
			return nil, bad("argument must be an array")
		}
		return listCond(cmp, op, list), nil
	case "$exists", "$type", "$size", "$mod":
		return shapeOperator(op, arg, bad)
	case "$regex", "$beginsWith":
		return stringOperator(op, arg, bad)
	case "$and", "$or", "$nor":
		return combinator(op, arg, path, bad)
	case "$not", "$elemMatch", "$allMatch", "$keyMapMatch":
		return nestedOperator(op, arg, path, bad)
	}
	return nil, &SyntaxError{Path: path, Reason: "unknown operator " + op, Op: op}
}

// shapeOperator compiles the operators on a value's presence, type, size
// or divisibility: $exists, $type, $size, $mod.
func shapeOperator(op string, arg any, bad badArg) (cond, error) {
	switch op {
	case "$exists":
		want, ok := arg.(bool)
		if !ok {
			return nil, bad("argument must be a boolean")
		}
		return func(_ any, found bool) bool { return found == want }, nil
	case "$type":
		name, ok := arg.(string)
		rank, known := typeNames[name]
		if !ok || !known {
			return nil, bad("argument must be one of null, boolean, number, string, array, object")
		}
		return func(v any, found bool) bool {
			if !found {
				return false
			}
			r := typeRank(v)
			if r == 2 {
				r = 1
			}
			return r == rank
		}, nil
	case "$size":
		n, ok := toInt(arg)
		if !ok || n < 0 {
			return nil, bad("argument must be a non-negative integer")
		}
		return func(v any, found bool) bool {
			a, ok := v.([]any)
			return found && ok && int64(len(a)) == n
		}, nil
	default: // $mod
		list, ok := arg.([]any)
		if !ok || len(list) != 2 {
			return nil, bad("argument must be [divisor, remainder]")
		}
		d, ok1 := toInt(list[0])
		r, ok2 := toInt(list[1])
		if !ok1 || !ok2 || d == 0 {
			return nil, bad("divisor and remainder must be integers, the divisor non-zero")
		}
		return func(v any, found bool) bool {
			n, ok := toInt(v)
			return found && ok && n%d == r
		}, nil
	}
}

// stringOperator compiles the operators on strings: $regex, $beginsWith.
func stringOperator(op string, arg any, bad badArg) (cond, error) {
	s, ok := arg.(string)
	if !ok {
		return nil, bad("argument must be a string")
	}
	if op == "$beginsWith" {
		return func(v any, found bool) bool {
			str, ok := v.(string)
			return found && ok && strings.HasPrefix(str, s)
		}, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, bad("invalid regular expression: %v", err)
	}
	return func(v any, found bool) bool {
		str, ok := v.(string)
		return found && ok && re.MatchString(str)
	}, nil
}

// nestedOperator compiles the operators whose argument is a selector of
// their own: $not, $elemMatch, $allMatch, $keyMapMatch.
func nestedOperator(op string, arg any, path string, bad badArg) (cond, error) {
	obj, ok := arg.(map[string]any)
	if !ok {
		return nil, bad("argument must be an object")
	}
	c, err := compileObject(obj, path)
	if err != nil {
		return nil, err
	}
	if op != "$not" {
		return elemCond(op, c), nil
	}
	if path == "" {
		return func(v any, found bool) bool { return !c(v, found) }, nil
	}
	// As every condition on a field, it needs the field (CouchDB).
	return func(v any, found bool) bool { return found && !c(v, found) }, nil
}

func compareCond(cmp func(a, b any) int, op string, arg any) cond {
	return func(v any, found bool) bool {
		if !found {
			return false
		}
		c := cmp(v, arg)
		switch op {
		case "$gt":
			return c > 0
		case "$gte":
			return c >= 0
		case "$lt":
			return c < 0
		}
		return c <= 0
	}
}

func contains(cmp func(a, b any) int, list []any, v any) bool {
	for _, x := range list {
		if cmp(v, x) == 0 {
			return true
		}
	}
	return false
}

// listCond implements $in, $nin and $all. As in CouchDB, $in and $nin
// against an array field test its elements.
func listCond(cmp func(a, b any) int, op string, list []any) cond {
	in := func(v any) bool {
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if contains(cmp, list, e) {
					return true
				}
			}
			return false
		}
		return contains(cmp, list, v)
	}
	switch op {
	case "$in":
		return func(v any, found bool) bool { return found && in(v) }
	case "$nin":
		return func(v any, found bool) bool { return found && !in(v) }
	}
	return func(v any, found bool) bool {
		arr, ok := v.([]any)
		if !found || !ok || len(list) == 0 {
			return false
		}
		if Compare(arr, list) == 0 {
			return true
		}
		for _, want := range list {
			if !contains(Compare, arr, want) {
				return false
			}
		}
		return true
	}
}

func combinator(op string, arg any, path string, bad badArg) (cond, error) {
	list, ok := arg.([]any)
	if !ok {
		return nil, bad("argument must be an array of selectors")
	}
	conds := make([]cond, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, bad("argument must be an array of selectors")
		}
		c, err := compileObject(obj, path)
		if err != nil {
			return nil, err
		}
		conds[i] = c
	}
	any1 := func(v any, found bool) bool {
		for _, c := range conds {
			if c(v, found) {
				return true
			}
		}
		return false
	}
	switch op {
	case "$and":
		return func(v any, found bool) bool {
			for _, c := range conds {
				if !c(v, found) {
					return false
				}
			}
			return true
		}, nil
	case "$or":
		// CouchDB: an empty $or matches everything.
		return func(v any, found bool) bool { return len(conds) == 0 || any1(v, found) }, nil
	}
	return func(v any, found bool) bool { return !any1(v, found) }, nil
}

func elemCond(op string, c cond) cond {
	switch op {
	case "$elemMatch":
		return func(v any, found bool) bool {
			arr, ok := v.([]any)
			if !found || !ok {
				return false
			}
			for _, e := range arr {
				if c(e, true) {
					return true
				}
			}
			return false
		}
	case "$allMatch":
		return func(v any, found bool) bool {
			arr, ok := v.([]any)
			if !found || !ok || len(arr) == 0 {
				return false
			}
			for _, e := range arr {
				if !c(e, true) {
					return false
				}
			}
			return true
		}
	}
	// $keyMapMatch: some key of an object matches.
	return func(v any, found bool) bool {
		obj, ok := v.(map[string]any)
		if !found || !ok {
			return false
		}
		for k := range obj {
			if c(k, true) {
				return true
			}
		}
		return false
	}
}
