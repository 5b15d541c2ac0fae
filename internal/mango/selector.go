// Package mango matches JSON documents against CouchDB Mango selectors, the
// query language of _find and of the changes feed's filter=_selector. It
// follows CouchDB's semantics (mango_selector.erl): implicit $and and $eq,
// dotted field paths, a missing field matches nothing but {"$exists": false}
// (and the negation of a condition), and comparisons across types use
// CouchDB's collation order.
package mango

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// SyntaxError is a selector CouchDB would refuse: an unknown operator or an
// operator argument of the wrong type. It unwraps to a couchdoc bad_request
// error, so servers answer 400 with its reason.
type SyntaxError struct {
	// Path is the field path where the error was found ("" at the top).
	Path string
	// Reason says what is wrong.
	Reason string
}

// Error formats the error with its path.
func (e *SyntaxError) Error() string {
	if e.Path == "" {
		return "invalid selector: " + e.Reason
	}
	return fmt.Sprintf("invalid selector at %q: %s", e.Path, e.Reason)
}

// Unwrap returns the error as a couchdoc bad_request error.
func (e *SyntaxError) Unwrap() error {
	return couchdoc.Errorf(couchdoc.ErrBadRequest, "%s", e.Error())
}

// Selector is a parsed selector, safe for concurrent use.
type Selector struct {
	match cond
}

// cond tests a value; found is false when the field is missing.
type cond func(v any, found bool) bool

// Parse parses a selector from JSON. It returns a *SyntaxError for a
// selector that is not an object or holds an unknown operator or a bad
// operator argument.
func Parse(data []byte) (*Selector, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &SyntaxError{Reason: "invalid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &SyntaxError{Reason: "trailing data after the selector"}
	}
	return ParseValue(v)
}

// ParseValue parses a selector already decoded from JSON (numbers as
// json.Number or float64).
func ParseValue(v any) (*Selector, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &SyntaxError{Reason: "a selector must be a JSON object"}
	}
	c, err := compileObject(obj, "")
	if err != nil {
		return nil, err
	}
	return &Selector{match: c}, nil
}

// Match reports whether a decoded JSON document matches the selector.
func (s *Selector) Match(doc any) bool {
	return s.match(doc, true)
}

// MatchJSON decodes a JSON document and matches it.
func (s *Selector) MatchJSON(data []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid JSON document: %v", err)
	}
	return s.Match(v), nil
}

// MatchDoc matches a document as CouchDB sees it: its user fields plus _id,
// _rev and, for a tombstone, _deleted. A body that is not a JSON object
// never matches.
func (s *Selector) MatchDoc(doc *couchdoc.Doc) bool {
	m := map[string]any{}
	if len(bytes.TrimSpace(doc.Body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(doc.Body))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return false
		}
	}
	m["_id"] = doc.ID
	if doc.Rev != "" {
		m["_rev"] = doc.Rev
	}
	if doc.Deleted {
		m["_deleted"] = true
	}
	return s.Match(m)
}

// compileObject compiles an object of conditions on one value: keys starting
// with '$' are operators on the value, other keys are (dotted) paths of
// sub-fields. All must hold (implicit $and).
func compileObject(obj map[string]any, path string) (cond, error) {
	conds := make([]cond, 0, len(obj))
	for _, key := range sortedKeys(obj) {
		arg := obj[key]
		var c cond
		var err error
		if strings.HasPrefix(key, "$") {
			c, err = compileOperator(key, arg, path)
		} else {
			c, err = compileField(key, arg, joinPath(path, key))
		}
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	if len(conds) == 1 {
		return conds[0], nil
	}
	return func(v any, found bool) bool {
		for _, c := range conds {
			if !c(v, found) {
				return false
			}
		}
		return true
	}, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// compileField compiles {"a.b": arg}: arg is a condition object, or a value
// the field must equal.
func compileField(key string, arg any, path string) (cond, error) {
	parts := splitPath(key)
	var inner cond
	if obj, ok := arg.(map[string]any); ok && len(obj) > 0 {
		c, err := compileObject(obj, path)
		if err != nil {
			return nil, err
		}
		inner = c
	} else {
		inner = eqCond(arg)
	}
	return func(v any, found bool) bool {
		sub, ok := lookup(v, found, parts)
		return inner(sub, ok)
	}, nil
}

// splitPath splits a field path at dots; "\." is a literal dot.
func splitPath(key string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(key); i++ {
		switch {
		case key[i] == '\\' && i+1 < len(key) && key[i+1] == '.':
			cur.WriteByte('.')
			i++
		case key[i] == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(key[i])
		}
	}
	return append(parts, cur.String())
}

// lookup follows a path into objects (and arrays, by numeric index).
func lookup(v any, found bool, parts []string) (any, bool) {
	if !found {
		return nil, false
	}
	for _, p := range parts {
		switch x := v.(type) {
		case map[string]any:
			v, found = x[p]
			if !found {
				return nil, false
			}
		case []any:
			i, ok := parseIndex(p)
			if !ok || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

func eqCond(arg any) cond {
	return func(v any, found bool) bool { return found && Compare(v, arg) == 0 }
}

var typeNames = map[string]int{"null": 0, "boolean": 1, "number": 3, "string": 4, "array": 5, "object": 6}

func compileOperator(op string, arg any, path string) (cond, error) {
	bad := func(format string, a ...any) error {
		return &SyntaxError{Path: path, Reason: op + ": " + fmt.Sprintf(format, a...)}
	}
	switch op {
	case "$eq":
		return eqCond(arg), nil
	case "$ne":
		return func(v any, found bool) bool { return found && Compare(v, arg) != 0 }, nil
	case "$gt", "$gte", "$lt", "$lte":
		return compareCond(op, arg), nil
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
	case "$in", "$nin", "$all":
		list, ok := arg.([]any)
		if !ok {
			return nil, bad("argument must be an array")
		}
		return listCond(op, list), nil
	case "$size":
		n, ok := toInt(arg)
		if !ok || n < 0 {
			return nil, bad("argument must be a non-negative integer")
		}
		return func(v any, found bool) bool {
			a, ok := v.([]any)
			return found && ok && int64(len(a)) == n
		}, nil
	case "$mod":
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
	case "$regex":
		s, ok := arg.(string)
		if !ok {
			return nil, bad("argument must be a string")
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, bad("invalid regular expression: %v", err)
		}
		return func(v any, found bool) bool {
			str, ok := v.(string)
			return found && ok && re.MatchString(str)
		}, nil
	case "$beginsWith":
		prefix, ok := arg.(string)
		if !ok {
			return nil, bad("argument must be a string")
		}
		return func(v any, found bool) bool {
			str, ok := v.(string)
			return found && ok && strings.HasPrefix(str, prefix)
		}, nil
	case "$and", "$or", "$nor":
		return combinator(op, arg, path, bad)
	case "$not":
		obj, ok := arg.(map[string]any)
		if !ok {
			return nil, bad("argument must be an object")
		}
		c, err := compileObject(obj, path)
		if err != nil {
			return nil, err
		}
		return func(v any, found bool) bool { return !c(v, found) }, nil
	case "$elemMatch", "$allMatch", "$keyMapMatch":
		obj, ok := arg.(map[string]any)
		if !ok {
			return nil, bad("argument must be an object")
		}
		c, err := compileObject(obj, path)
		if err != nil {
			return nil, err
		}
		return elemCond(op, c), nil
	}
	return nil, &SyntaxError{Path: path, Reason: "unknown operator " + op}
}

func compareCond(op string, arg any) cond {
	return func(v any, found bool) bool {
		if !found {
			return false
		}
		c := Compare(v, arg)
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

func contains(list []any, v any) bool {
	for _, x := range list {
		if Compare(x, v) == 0 {
			return true
		}
	}
	return false
}

// listCond implements $in, $nin and $all. As in CouchDB, $in and $nin
// against an array field test its elements.
func listCond(op string, list []any) cond {
	in := func(v any) bool {
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if contains(list, e) {
					return true
				}
			}
			return false
		}
		return contains(list, v)
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
			if !contains(arr, want) {
				return false
			}
		}
		return true
	}
}

func combinator(op string, arg any, path string, bad func(string, ...any) error) (cond, error) {
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
