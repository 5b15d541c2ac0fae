package query

import (
	"strings"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
)

// A query reads a few members of each document it examines: those its
// selector, sort and fields name. Decoding only them (mango.DecodeMembers)
// rather than the whole body is most of a row's cost saved; a whole
// document returned is copied from its stored JSON, not re-encoded.

// neededMembers returns the top-level members a query reads, nil when it
// cannot tell (a top-level operator other than $and, $or, $nor and $not).
func neededMembers(req *request) map[string]bool {
	need := map[string]bool{}
	if !selectorMembers(req.selector.Raw(), need) {
		return nil
	}
	for _, f := range req.sort {
		need[mango.TopField(f.Field)] = true
	}
	for _, f := range req.fields {
		need[mango.TopField(f)] = true
	}
	return need
}

// selectorMembers adds the top-level fields of a selector object to need.
func selectorMembers(obj map[string]any, need map[string]bool) bool {
	for k, v := range obj {
		if !strings.HasPrefix(k, "$") {
			need[mango.TopField(k)] = true
			continue
		}
		switch k {
		case "$and", "$or", "$nor":
			list, ok := v.([]any)
			if !ok {
				return false
			}
			for _, e := range list {
				m, ok := e.(map[string]any)
				if !ok || !selectorMembers(m, need) {
					return false
				}
			}
		case "$not":
			m, ok := v.(map[string]any)
			if !ok || !selectorMembers(m, need) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// decodeMembers decodes the members need names of a row's document (all
// of them when need is nil), with _id and _rev, as selectors see it.
func decodeMembers(row *localdb.IndexRow, need map[string]bool) (map[string]any, error) {
	return mango.DecodeDoc(row.Doc.ID, row.Doc.Rev, row.Doc.Body, need)
}
