package query

import (
	"encoding/base64"
	"net/http"
	"slices"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
)

const warnNoIndex = "No matching index found, create an index to optimize query time."

// plan is how a query reads the store.
type plan struct {
	index *mango.Index // nil: the _all_docs index
	scan  localdb.IndexScan
	empty bool // the selector's ranges exclude everything
	// startKey and endKey are the bounds as values, for Explain; endOpen
	// is true when endKey ends with CouchDB's "<MAX>".
	startKey, endKey []any
	endOpen          bool
	warnings         []string
	// fellBack is set when use_index named no index that can serve the
	// query and another was used.
	fellBack bool
	// exact is set when a row's key being in the scan's range is the
	// selector matching its document (see exactRange), but for rows whose
	// keys start with gtKey, the excluded low bound of a $gt.
	exact bool
	gtKey []byte
}

// makePlan picks one of the store's indexes and the key range, as CouchDB
// 3 does (see the package doc).
func makePlan(indexes []*mango.Index, req *request) (*plan, error) {
	sortFields := make([]string, len(req.sort))
	for i, f := range req.sort {
		sortFields[i] = f.Field
	}
	conj := req.selector.Conjuncts()
	var candidates []*mango.Index
	for _, ix := range indexes {
		if ix.Partial == nil && usable(ix, req.selector, conj, sortFields) {
			candidates = append(candidates, ix)
		}
	}
	p := &plan{}
	if len(req.useIndex) == 0 && !req.allowFallback {
		// CouchDB 3.5 then wants more than one usable index, _all_docs
		// counted (usable with no sort, or a sort on _id it can serve).
		allDocs := len(sortFields) == 0 ||
			slices.Equal(sortFields, []string{"_id"}) && slices.ContainsFunc(conj, func(c mango.Conjunct) bool { return c.Field == "_id" })
		if n := len(candidates); allDocs && n < 1 || !allDocs && n < 2 {
			return nil, useIndexError(nil)
		}
	}
	if len(req.useIndex) > 0 {
		var named []*mango.Index
		for _, ix := range indexes {
			if ix.DDoc == req.useIndex[0] && (len(req.useIndex) == 1 || ix.Name == req.useIndex[1]) &&
				usable(ix, req.selector, conj, sortFields) {
				named = append(named, ix)
			}
		}
		switch {
		case len(named) > 0:
			candidates = named
		case !req.allowFallback:
			return nil, useIndexError(req.useIndex)
		default:
			p.warnings = append(p.warnings, useIndexWarning(req.useIndex))
			p.fellBack = true
		}
	}
	if len(candidates) > 0 {
		p.index = best(candidates, conj)
	} else if len(sortFields) > 0 && !(slices.Equal(sortFields, []string{"_id"}) && rawRange(conj, "_id").bounded()) {
		// _all_docs sorts by _id only when the selector bounds _id.
		return nil, ErrNoUsableIndex
	} else {
		p.warnings = append(p.warnings, warnNoIndex)
	}
	p.scan.Descending = len(req.sort) > 0 && req.sort[0].Desc
	if p.index != nil {
		p.scan.DDoc, p.scan.Name = p.index.DDoc, p.index.Name
		p.jsonRange(conj)
	} else {
		p.allDocsRange(conj)
	}
	if req.bookmark != "" {
		key, err := base64.RawURLEncoding.DecodeString(req.bookmark)
		if err != nil || len(key) == 0 {
			return nil, mangoError(http.StatusBadRequest, "invalid_bookmark", "Invalid bookmark value: %s", jsonText(req.bookmark))
		}
		p.scan.After = key
	}
	return p, nil
}

func useIndexWarning(ui []string) string {
	if len(ui) == 1 {
		return ui[0] + " was not used because it does not contain a valid index for this query."
	}
	return ui[0] + ", " + ui[1] + " was not used because it is not a valid index for this query."
}

// useIndexError is CouchDB's answer when allow_fallback is false and
// use_index names no index that can serve the query (or, with none named,
// no index can).
func useIndexError(ui []string) error {
	switch len(ui) {
	case 0:
		return mangoError(http.StatusBadRequest, "invalid_index", "You must specify an index with the `use_index` parameter.")
	case 1:
		return mangoError(http.StatusBadRequest, "invalid_index", "%s specified by `use_index` could not be found or it is not suitable.", ui[0])
	}
	return mangoError(http.StatusBadRequest, "invalid_index", "%s, %s specified by `use_index` could not be found or it is not suitable.", ui[0], ui[1])
}

// usable: every column the selector requires (but for sort fields, _id and
// _rev), and the sort a prefix of the columns after constant ones.
func usable(ix *mango.Index, sel *mango.Selector, conj []mango.Conjunct, sortFields []string) bool {
	cols := ix.Columns()
	for _, c := range cols {
		if c == "_id" || c == "_rev" || slices.Contains(sortFields, c) {
			continue
		}
		if !sel.RequiresField(c) {
			return false
		}
	}
	return canUseSort(cols, sortFields, conj)
}

func canUseSort(cols, sortFields []string, conj []mango.Conjunct) bool {
	for {
		switch {
		case len(sortFields) == 0:
			return true
		case len(cols) == 0:
			return false
		case cols[0] == sortFields[0]:
			return len(sortFields) <= len(cols) && slices.Equal(cols[:len(sortFields)], sortFields)
		case !isConstant(conj, cols[0]):
			return false
		}
		cols = cols[1:]
	}
}

func isConstant(conj []mango.Conjunct, field string) bool {
	for _, c := range conj {
		if c.Field == field && c.Op == "$eq" {
			return true
		}
	}
	return false
}

// best prefers the index whose leading columns are bounded the furthest,
// then the one with fewer columns, then by design doc and name.
func best(cands []*mango.Index, conj []mango.Conjunct) *mango.Index {
	prefix := func(ix *mango.Index) int {
		n := 0
		for _, c := range ix.Columns() {
			if r := fieldRange(conj, c); !r.bounded() {
				break
			}
			n++
		}
		return n
	}
	b := cands[0]
	for _, ix := range cands[1:] {
		pb, pi := prefix(b), prefix(ix)
		switch {
		case pi > pb:
			b = ix
		case pi < pb:
		case len(ix.Fields) < len(b.Fields):
			b = ix
		case len(ix.Fields) == len(b.Fields) && (ix.DDoc < b.DDoc || ix.DDoc == b.DDoc && ix.Name < b.Name):
			b = ix
		}
	}
	return b
}

// rng is the range of one field the selector's comparisons allow.
type rng struct {
	low, high         any
	hasLow, hasHigh   bool
	lowIncl, highIncl bool
}

func (r rng) bounded() bool { return r.hasLow || r.hasHigh }

func (r rng) isEq() bool {
	return r.hasLow && r.hasHigh && r.lowIncl && r.highIncl && mango.Compare(r.low, r.high) == 0
}

func (r rng) isEmpty() bool {
	if !r.hasLow || !r.hasHigh {
		return false
	}
	c := mango.Compare(r.low, r.high)
	return c > 0 || c == 0 && !(r.lowIncl && r.highIncl)
}

// fieldRange intersects the $eq, $gt, $gte, $lt and $lte conditions on
// field.
func fieldRange(conj []mango.Conjunct, field string) rng {
	var r rng
	setLow := func(v any, incl bool) {
		if !r.hasLow {
			r.low, r.lowIncl, r.hasLow = v, incl, true
			return
		}
		if c := mango.Compare(v, r.low); c > 0 || c == 0 && !incl {
			r.low, r.lowIncl = v, incl
		}
	}
	setHigh := func(v any, incl bool) {
		if !r.hasHigh {
			r.high, r.highIncl, r.hasHigh = v, incl, true
			return
		}
		if c := mango.Compare(v, r.high); c < 0 || c == 0 && !incl {
			r.high, r.highIncl = v, incl
		}
	}
	for _, c := range conj {
		if c.Field != field {
			continue
		}
		switch c.Op {
		case "$eq":
			setLow(c.Arg, true)
			setHigh(c.Arg, true)
		case "$gt":
			setLow(c.Arg, false)
		case "$gte":
			setLow(c.Arg, true)
		case "$lt":
			setHigh(c.Arg, false)
		case "$lte":
			setHigh(c.Arg, true)
		}
	}
	return r
}

// jsonRange sets the scan's key bounds from the ranges of the leading
// columns: equalities extend a common prefix; the first other range bounds
// the last column used. Rows inside the bounds that the selector refuses
// (an exclusive bound's value, say) are dropped when matched.
func (p *plan) jsonRange(conj []mango.Conjunct) {
	var prefix []byte
	var used []string
	defer func() { p.exact = exactRange(conj, used) }()
	for _, col := range p.index.Columns() {
		r := fieldRange(conj, col)
		used = append(used, col)
		switch {
		case r.isEmpty():
			p.empty = true
			return
		case r.isEq():
			prefix = mango.EncodeKey(prefix, r.low)
			p.startKey = append(p.startKey, r.low)
			p.endKey = append(p.endKey, r.low)
			continue
		case !r.bounded():
			used = used[:len(used)-1]
		default:
			p.scan.Start = prefix
			p.scan.End = append(slices.Clip(prefix), mango.KeyMax)
			if r.hasLow {
				p.scan.Start = mango.EncodeKey(slices.Clip(prefix), r.low)
				p.startKey = append(p.startKey, r.low)
				if !r.lowIncl {
					p.gtKey = p.scan.Start
				}
			}
			if r.hasHigh {
				p.scan.End = mango.EncodeKey(slices.Clip(prefix), r.high)
				p.endKey = append(p.endKey, r.high)
				if r.highIncl {
					p.scan.End = append(p.scan.End, mango.KeyMax)
				}
			} else {
				p.endOpen = true
			}
			p.ensureBounds()
			return
		}
		break
	}
	if len(prefix) > 0 {
		p.scan.Start = prefix
		p.scan.End = append(slices.Clip(prefix), mango.KeyMax)
	}
	p.endOpen = true
}

// exactRange reports whether a document whose key is in the range that
// jsonRange made from the columns used matches the selector, so that rows
// need not be decoded to be matched. It holds when every condition of the
// selector is an $eq, $gt, $gte, $lt or $lte on one of those columns (not
// _id or _rev, which compare by raw order): such a condition compares the
// field's value by Compare, whose order the keys have, and two values are
// Compare-equal exactly when their encodings are equal (mango.EncodeKey).
// Encodings are prefix-free (mango.KeyLen), so a key after the range's
// start either begins with the start's encoding of the bound, a value equal
// to it (which an excluded bound, $gt, must still refuse: gtKey), or is
// above it in its first differing byte, and its value is above the bound;
// likewise below the end.
func exactRange(conj []mango.Conjunct, used []string) bool {
	for _, c := range conj {
		switch c.Op {
		case "$eq", "$gt", "$gte", "$lt", "$lte":
		default:
			return false
		}
		if c.Field == "_id" || c.Field == "_rev" || !slices.Contains(used, c.Field) {
			return false
		}
	}
	return true
}

// ensureBounds makes an empty byte prefix a real (inclusive) start.
func (p *plan) ensureBounds() {
	if p.scan.Start == nil {
		p.scan.Start = []byte{}
	}
}

// allDocsRange bounds an _all_docs scan by the conditions on _id, which
// CouchDB compares by raw term order (mango.CompareRaw): string bounds
// are byte ranges of ids, as _all_docs orders them; every string is above
// any other value, so a non-string lower bound bounds nothing and a
// non-string upper bound excludes every id.
func (p *plan) allDocsRange(conj []mango.Conjunct) {
	r := rawRange(conj, "_id")
	p.endOpen = true
	if r.hasLow {
		if id, ok := r.low.(string); ok {
			p.scan.Start = []byte(id)
			if !r.lowIncl {
				p.scan.Start = append(p.scan.Start, 0)
			}
			p.startKey = []any{id}
		}
	}
	if r.hasHigh {
		id, ok := r.high.(string)
		if !ok {
			p.empty = true
			return
		}
		p.scan.End = []byte(id)
		if r.highIncl {
			p.scan.End = append(p.scan.End, 0)
		}
		p.endKey, p.endOpen = []any{id}, false
	}
	if p.scan.Start != nil && p.scan.End != nil && string(p.scan.Start) >= string(p.scan.End) {
		p.empty = true
	}
}

// rawRange is fieldRange with CouchDB's raw comparison of _id.
func rawRange(conj []mango.Conjunct, field string) rng {
	var r rng
	for _, c := range conj {
		if c.Field != field {
			continue
		}
		low, high := c.Op == "$eq" || c.Op == "$gt" || c.Op == "$gte", c.Op == "$eq" || c.Op == "$lt" || c.Op == "$lte"
		incl := c.Op == "$eq" || c.Op == "$gte" || c.Op == "$lte"
		if low {
			if cmp := mango.CompareRaw(c.Arg, r.low); !r.hasLow || cmp > 0 || cmp == 0 && !incl {
				r.low, r.lowIncl, r.hasLow = c.Arg, incl, true
			}
		}
		if high {
			if cmp := mango.CompareRaw(c.Arg, r.high); !r.hasHigh || cmp < 0 || cmp == 0 && !incl {
				r.high, r.highIncl, r.hasHigh = c.Arg, incl, true
			}
		}
	}
	return r
}
