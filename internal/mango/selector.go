package mango

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	// Op is the unknown operator, when that is what is wrong.
	Op string
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
	raw   map[string]any
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
	obj = normNegations(obj)
	c, err := compileObject(obj, "")
	if err != nil {
		return nil, err
	}
	return &Selector{match: c, raw: obj}, nil
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

// SplitPath splits a field path into member names as CouchDB's
// mango_util:parse_field does: at each dot not preceded by a backslash,
// then every backslash is dropped, so "a\.b" names the member "a.b" and
// "\$a" the member "$a" (a name that would otherwise be an operator).
func SplitPath(key string) []string { return splitPath(key) }

func splitPath(key string) []string {
	if strings.IndexByte(key, '\\') < 0 {
		return strings.Split(key, ".")
	}
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(key); i++ {
		switch {
		case key[i] == '\\':
			if i+1 < len(key) && key[i+1] == '.' {
				cur.WriteByte('.')
				i++
			}
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
