package mango

import (
	"sort"
	"strings"
)

// Conjunct is one condition that every matching document satisfies: a
// field condition found at the top of a selector, through implicit and
// explicit $and. A planner reads the conditions that bound an index range
// from them; the selector itself is still applied to every row.
type Conjunct struct {
	// Field is the dotted path of the field ("" for a condition on the whole
	// document, such as an $or).
	Field string
	// Op is the operator ("$eq" for a plain value) and Arg its argument.
	Op  string
	Arg any
	// match tests the field's value (found false when missing).
	match cond
}

// RequiresField reports whether the conjunct can only hold when its field
// exists (false for {"$exists": false} and negations).
func (c Conjunct) RequiresField() bool {
	return c.Field != "" && !c.match(nil, false)
}

// Conjuncts returns the selector's top-level conditions, sorted by field.
func (s *Selector) Conjuncts() []Conjunct {
	var out []Conjunct
	collectConjuncts(s.raw, "", &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// Raw returns the selector as parsed (decoded JSON), for display.
func (s *Selector) Raw() map[string]any { return s.raw }

// RequiresField reports whether a document must have the field to match.
func (s *Selector) RequiresField(field string) bool {
	for _, c := range s.Conjuncts() {
		if c.Field == field && c.RequiresField() {
			return true
		}
	}
	return false
}

func collectConjuncts(obj map[string]any, path string, out *[]Conjunct) {
	for _, key := range sortedKeys(obj) {
		arg := obj[key]
		switch {
		case key == "$and" && path == "":
			list, _ := arg.([]any)
			for _, item := range list {
				if m, ok := item.(map[string]any); ok {
					collectConjuncts(m, "", out)
				}
			}
		case strings.HasPrefix(key, "$"):
			c, err := compileOperator(key, arg, path)
			if err != nil {
				continue // Parse has already refused such selectors
			}
			*out = append(*out, Conjunct{Field: path, Op: key, Arg: arg, match: c})
		default:
			field := joinPath(path, key)
			if m, ok := arg.(map[string]any); ok && len(m) > 0 {
				collectConjuncts(m, field, out)
				continue
			}
			*out = append(*out, Conjunct{Field: field, Op: "$eq", Arg: arg, match: eqCond(arg)})
		}
	}
}

// Lookup returns the value at a dotted field path of a decoded document
// (numeric parts index arrays, "\." is a literal dot); found is false when
// the path does not exist.
func Lookup(doc any, field string) (v any, found bool) {
	return lookup(doc, true, splitPath(field))
}

// Normalized returns the selector in the shape CouchDB's _explain shows:
// one condition as {"field": {"$op": arg}}, several under "$and".
func (s *Selector) Normalized() map[string]any {
	cs := s.Conjuncts()
	items := make([]any, 0, len(cs))
	for _, c := range cs {
		if c.Field == "" {
			items = append(items, map[string]any{c.Op: c.Arg})
			continue
		}
		items = append(items, map[string]any{c.Field: map[string]any{c.Op: c.Arg}})
	}
	if len(items) == 1 {
		return items[0].(map[string]any)
	}
	if len(items) == 0 {
		return map[string]any{}
	}
	return map[string]any{"$and": items}
}
