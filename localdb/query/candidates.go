package query

import (
	"slices"
	"sort"
	"strings"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
)

// candidate is one index _explain lists as not chosen, with CouchDB 3.5's
// analysis (mango_cursor): whether it could serve the query, the first
// reason it was not chosen, and its ranking.
type candidate struct {
	Index    IndexInfo `json:"index"`
	Analysis analysis  `json:"analysis"`
}

type analysis struct {
	Usable   bool           `json:"usable"`
	Reasons  []candidateWhy `json:"reasons"`
	Ranking  int            `json:"ranking"`
	Covering *bool          `json:"covering"` // null for _all_docs
}

type candidateWhy struct {
	Name string `json:"name"`
}

// candidates analyses every index but the chosen one (p.index, nil for
// _all_docs) as CouchDB 3.5 does: usable json indexes ranked behind the
// winner (less_overlap, too_many_fields, alphabetically_comes_after),
// then groups ranked one above the last non-empty group: _all_docs when
// a json index won (unfavored_type), indexes use_index left out
// (excluded_by_user), unusable ones (field_mismatch,
// sort_order_mismatch), partial ones (is_partial). The list is ordered as
// CouchDB's map fold leaves it: by design doc then name, descending, with
// _all_docs last.
func candidates(db *localdb.DB, req *request, p *plan) []candidate {
	sortFields := make([]string, len(req.sort))
	for i, f := range req.sort {
		sortFields[i] = f.Field
	}
	conj := req.selector.Conjuncts()
	type entry struct {
		ix     *mango.Index // nil: _all_docs
		usable bool
		reason string
		group  int // 0 ranked usable, 1 unfavored, 2 excluded, 3 not usable, 4 partial
		rank   int
	}
	var entries []*entry
	var ranked []*mango.Index
	for _, ix := range db.Indexes() {
		e := &entry{ix: ix}
		switch {
		case ix == p.index:
			continue
		case ix.Partial != nil:
			e.reason, e.group = "is_partial", 4
		case !requiredFieldsOK(ix, req.selector, sortFields):
			e.reason, e.group = "field_mismatch", 3
		case !canUseSort(ix.Columns(), sortFields, conj):
			e.reason, e.group = "sort_order_mismatch", 3
		case len(req.useIndex) > 0 && !p.fellBack && !(ix.DDoc == req.useIndex[0] && (len(req.useIndex) == 1 || ix.Name == req.useIndex[1])):
			e.usable, e.reason, e.group = true, "excluded_by_user", 2
		default:
			e.usable = true
			ranked = append(ranked, ix)
		}
		entries = append(entries, e)
	}
	if p.index != nil {
		e := &entry{usable: true, reason: "unfavored_type", group: 1}
		if len(req.useIndex) > 0 && !p.fellBack {
			e.reason, e.group = "excluded_by_user", 2
		}
		if len(req.sort) > 0 {
			switch {
			case !slices.ContainsFunc(conj, func(c mango.Conjunct) bool { return c.Field == "_id" }):
				e.usable, e.reason, e.group = false, "field_mismatch", 3
			case !slices.Equal(sortFields, []string{"_id"}):
				e.usable, e.reason, e.group = false, "sort_order_mismatch", 3
			}
		}
		entries = append(entries, e)
	}
	// The usable json indexes in the order best prefers them, the winner
	// (when a json index) at 0.
	order := append([]*mango.Index{}, ranked...)
	if p.index != nil {
		order = append([]*mango.Index{p.index}, order...)
	}
	sort.SliceStable(order, func(i, j int) bool {
		return best([]*mango.Index{order[j], order[i]}, conj) == order[i] && order[i] != order[j]
	})
	var winnerCols, winnerPrefix int
	if p.index != nil {
		winnerCols, winnerPrefix = len(p.index.Fields), boundedPrefix(p.index, conj)
	}
	// Group ranks: the first is the number of ranked indexes (at least 1),
	// each later non-empty group one more.
	rank := max(1, len(order))
	groupRank := map[int]int{1: rank}
	for g := 2; g <= 4; g++ {
		if slices.ContainsFunc(entries, func(e *entry) bool { return e.group == g-1 }) {
			rank++
		}
		groupRank[g] = rank
	}
	for _, e := range entries {
		if e.group != 0 {
			e.rank = groupRank[e.group]
			continue
		}
		e.rank = slices.Index(order, e.ix)
		switch {
		case boundedPrefix(e.ix, conj) < winnerPrefix:
			e.reason = "less_overlap"
		case len(e.ix.Fields) > winnerCols:
			e.reason = "too_many_fields"
		default:
			e.reason = "alphabetically_comes_after"
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i].ix, entries[j].ix
		switch {
		case a == nil:
			return false
		case b == nil:
			return true
		case a.DDoc != b.DDoc:
			return a.DDoc > b.DDoc
		}
		return a.Name > b.Name
	})
	out := make([]candidate, 0, len(entries))
	for _, e := range entries {
		c := candidate{Analysis: analysis{Usable: e.usable, Reasons: []candidateWhy{{e.reason}}, Ranking: e.rank}}
		if e.ix == nil {
			c.Index = allDocsInfo()
		} else {
			c.Index = jsonInfo(e.ix)
			cov := covers(e.ix, req.fields)
			c.Analysis.Covering = &cov
		}
		out = append(out, c)
	}
	return out
}

// requiredFieldsOK: the selector requires every column but sort fields,
// _id and _rev.
func requiredFieldsOK(ix *mango.Index, sel *mango.Selector, sortFields []string) bool {
	for _, c := range ix.Columns() {
		if c != "_id" && c != "_rev" && !slices.Contains(sortFields, c) && !sel.RequiresField(c) {
			return false
		}
	}
	return true
}

// boundedPrefix is how many leading columns the selector bounds.
func boundedPrefix(ix *mango.Index, conj []mango.Conjunct) int {
	n := 0
	for _, c := range ix.Columns() {
		if !fieldRange(conj, c).bounded() {
			break
		}
		n++
	}
	return n
}

// covers reports whether fields are all in the index (its columns and
// _id), as CouchDB's mango_idx_view:covers; never for all fields (nil).
func covers(ix *mango.Index, fields []string) bool {
	if fields == nil {
		return false
	}
	cols := append(ix.Columns(), "_id")
	for _, f := range fields {
		if !slices.Contains(cols, f) {
			return false
		}
	}
	return true
}

// requiredFields is what a query reads of each document, as CouchDB's
// mango_cursor_view:required_fields: the fields it returns and those its
// selector names; nil when it returns whole documents. When an index
// covers them CouchDB reads no document: it matches the selector against
// a document made of the row's key and id (see coveredDoc).
func requiredFields(req *request) []string {
	if req.fields == nil {
		return nil
	}
	out := append([]string{}, req.fields...)
	return selectorFields(req.selector.Raw(), "", out)
}

// selectorFields appends the fields a selector names, as CouchDB's
// mango_selector:fields of the normalized selector: dotted paths, through
// $and, $or, $nor and $not (CouchDB's normalization moves a $not below
// the fields it negates).
func selectorFields(obj map[string]any, path string, out []string) []string {
	for k, v := range obj {
		switch {
		case k == "$and" || k == "$or" || k == "$nor":
			list, _ := v.([]any)
			for _, e := range list {
				if m, ok := e.(map[string]any); ok {
					out = selectorFields(m, path, out)
				}
			}
		case k == "$not" && path == "":
			if m, ok := v.(map[string]any); ok {
				out = selectorFields(m, path, out)
			}
		case strings.HasPrefix(k, "$"):
			out = append(out, path)
		default:
			field := k
			if path != "" {
				field = path + "." + k
			}
			if m, ok := v.(map[string]any); ok && len(m) > 0 {
				out = selectorFields(m, field, out)
				continue
			}
			out = append(out, field)
		}
	}
	return out
}

// selectorHints is CouchDB's selector_hints for json indexes: the
// selector's top-level fields whose conditions an index range can use
// ($eq, $gt, $gte, $lt, $lte, $beginsWith, $exists), and the others.
func selectorHints(req *request) []map[string]any {
	indexable, all := map[string]bool{}, map[string]bool{}
	for _, c := range req.selector.Conjuncts() {
		if c.Field == "" {
			continue
		}
		all[c.Field] = true
		switch c.Op {
		case "$eq", "$gt", "$gte", "$lt", "$lte", "$beginsWith", "$exists":
			indexable[c.Field] = true
		}
	}
	in, out := []string{}, []string{}
	for f := range all {
		if indexable[f] {
			in = append(in, f)
		} else {
			out = append(out, f)
		}
	}
	sort.Strings(in)
	sort.Strings(out)
	return []map[string]any{{"type": "json", "indexable_fields": in, "unindexable_fields": out}}
}

// orderedSelector is the normalized selector with its $and members in
// the order the request gives their fields, as CouchDB keeps them.
func orderedSelector(req *request) map[string]any {
	norm := req.selector.Normalized()
	items, ok := norm["$and"].([]any)
	if !ok {
		return norm
	}
	order := selectorFieldOrder(req.body)
	pos := func(item any) int {
		m, _ := item.(map[string]any)
		for k := range m {
			if strings.HasPrefix(k, "$") {
				break
			}
			if i := slices.Index(order, k); i >= 0 {
				return i
			}
		}
		return len(order)
	}
	sort.SliceStable(items, func(i, j int) bool { return pos(items[i]) < pos(items[j]) })
	return norm
}
