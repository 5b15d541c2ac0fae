package mango

import (
	"sort"
	"strings"
)

// CouchDB normalizes a selector before using it (mango_selector:normalize)
// and its negations change what matches: $not and $nor are pushed down to
// the fields by De Morgan's laws ({"$nor": [{"a": 1}]} is {"a": {"$ne":
// 1}}), and a condition on a field never holds for a document without the
// field (but $exists: false). So {"$not": {"a": 1}} does not match a
// document without "a", which a literal negation would. normNegations
// rewrites a parsed selector object the same way; planners then see the
// negated fields as required, as CouchDB's do.

// negated maps each comparison operator to its negation.
var negated = map[string]string{
	"$lt": "$gte", "$lte": "$gt", "$gt": "$lte", "$gte": "$lt",
	"$eq": "$ne", "$ne": "$eq", "$in": "$nin", "$nin": "$in",
}

// normNegations returns obj with its $not and $nor pushed down.
func normNegations(obj map[string]any) map[string]any {
	if len(obj) > 1 && (obj["$not"] != nil || obj["$nor"] != nil) {
		// Implicit $and with a negation beside other members: split it, so
		// that the rewritten members cannot collide.
		items := make([]any, 0, len(obj))
		for _, k := range sortedKeys(obj) {
			items = append(items, normNegations(map[string]any{k: obj[k]}))
		}
		return map[string]any{"$and": items}
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		switch k {
		case "$not":
			if m, ok := v.(map[string]any); ok {
				return negate(m)
			}
		case "$nor":
			if list, ok := mapList(v); ok {
				items := make([]any, len(list))
				for i, m := range list {
					items[i] = negate(m)
				}
				return map[string]any{"$and": items}
			}
		case "$and", "$or":
			if list, ok := mapList(v); ok {
				items := make([]any, len(list))
				for i, m := range list {
					items[i] = normNegations(m)
				}
				out[k] = items
				continue
			}
		default:
			if m, ok := v.(map[string]any); ok && len(m) > 0 && (k == "$elemMatch" || k == "$allMatch" || k == "$keyMapMatch" || !strings.HasPrefix(k, "$")) {
				out[k] = normNegations(m)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// negate returns the negation of a selector object (or of the condition
// object of a field).
func negate(obj map[string]any) map[string]any {
	if len(obj) != 1 {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make([]any, len(keys))
		for i, k := range keys {
			items[i] = negate(map[string]any{k: obj[k]})
		}
		return map[string]any{"$or": items}
	}
	for k, v := range obj {
		switch k {
		case "$not":
			if m, ok := v.(map[string]any); ok {
				return normNegations(m)
			}
		case "$nor":
			if list, ok := mapList(v); ok {
				items := make([]any, len(list))
				for i, m := range list {
					items[i] = normNegations(m)
				}
				return map[string]any{"$or": items}
			}
		case "$and", "$or":
			if list, ok := mapList(v); ok {
				items := make([]any, len(list))
				for i, m := range list {
					items[i] = negate(m)
				}
				if k == "$and" {
					return map[string]any{"$or": items}
				}
				return map[string]any{"$and": items}
			}
		case "$exists":
			if b, ok := v.(bool); ok {
				return map[string]any{"$exists": !b}
			}
		}
		if op, ok := negated[k]; ok {
			return map[string]any{op: v}
		}
		if strings.HasPrefix(k, "$") {
			return map[string]any{"$not": obj}
		}
		// A field: negate its condition; a plain value is an $eq.
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			return map[string]any{k: negate(m)}
		}
		return map[string]any{k: map[string]any{"$ne": v}}
	}
	return obj
}

// mapList returns v as a list of objects, false when it is not one.
func mapList(v any) ([]map[string]any, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]map[string]any, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		out[i] = m
	}
	return out, true
}
