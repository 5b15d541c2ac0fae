package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/viewstore"
)

// noViewChunks says whether queries read rows only, not the view files'
// chunk records (offsets, reductions over whole chunks); the benchmarks
// and tests compare the two.
var noViewChunks atomic.Bool

// reduceQuery reduces the rows of each group. With chunks, a chunk wholly
// inside a group is reduced from its record (see package viewstore);
// errNeedRows when a group's rows cannot be reduced with records (the
// caller asks again without them).
func reduceQuery(ctx context.Context, f *viewstore.File, vi int, red *reducer, o *ViewOptions, chunks bool) (*ViewResult, error) {
	rs, err := ranges(vi, o, true)
	if err != nil {
		return nil, err
	}
	level := o.GroupLevel
	if level == 0 {
		level = -1
	}
	if o.Group && level < 0 {
		level = -2 // exact keys
	}
	res := &ViewResult{Rows: []ViewRow{}}
	skip, limit := o.Skip, o.Limit
	var group []reduceRow
	var sums []*viewstore.Summary
	var groupKey, gkBuf, gkBuf2 []byte
	var groupJS json.RawMessage
	flush := func() error {
		if len(group) == 0 && len(sums) == 0 {
			return nil
		}
		defer func() { group, sums = group[:0], sums[:0] }()
		if skip > 0 {
			skip--
			return nil
		}
		if limit == 0 {
			return nil
		}
		v, err := red.reduceParts(group, sums)
		var over *overflowError
		if errors.As(err, &over) {
			// CouchDB ends the answer with the refused reduction's row.
			res.Rows = append(res.Rows, ViewRow{Error: "reduce_overflow_error", Reason: over.Error()})
			limit = 0
			return nil
		}
		if err != nil {
			return err
		}
		key := groupJS
		if level < 0 && level != -2 {
			key = nil
		}
		res.Rows = append(res.Rows, ViewRow{Key: key, Value: v})
		limit--
		return nil
	}
	groupOf := func(dst, key []byte) ([]byte, bool) {
		switch level {
		case -1:
			return nil, true
		case -2:
			return key, true
		}
		return mango.ViewKeyGroup(dst[:0], key, level)
	}
	// next starts a new group at gk unless the rows so far are of it.
	next := func(gk []byte, first func() (*viewstore.Row, error)) error {
		if len(group)+len(sums) > 0 && level != -1 && !bytes.Equal(gk, groupKey) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(group)+len(sums) > 0 {
			return nil
		}
		groupKey = append(groupKey[:0], gk...)
		if level == -1 {
			groupJS = nil
			return nil
		}
		row, err := first()
		if err == nil {
			groupJS, err = groupJSON(row, level)
		}
		return err
	}
	whole := func(s *viewstore.Summary) bool {
		if !chunks || !red.canUse(s) {
			return false
		}
		g1, ok1 := groupOf(gkBuf[:0], s.First)
		gkBuf = g1
		g2, ok2 := groupOf(gkBuf2[:0], s.Last)
		gkBuf2 = g2
		return ok1 && ok2 && bytes.Equal(g1, g2)
	}
	onRow := func(row *viewstore.Row) (bool, error) {
		gk, ok := groupOf(gkBuf, row.Key)
		if !ok {
			return false, fmt.Errorf("view key of %s: not a view key encoding", row.ID)
		}
		gkBuf = gk
		if err := next(gk, func() (*viewstore.Row, error) { return row, nil }); err != nil {
			return false, err
		}
		group = append(group, reduceRow{key: row.Key, kjson: row.KJSON, id: row.ID, value: row.Value})
		return true, nil
	}
	seq := int64(-1)
	onSum := func(s *viewstore.Summary) (bool, error) {
		gk, _ := groupOf(gkBuf, s.First)
		gkBuf = gk
		if err := next(gk, func() (*viewstore.Row, error) { return f.FirstRow(ctx, s, o.Descending) }); err != nil {
			return false, err
		}
		if red.isJS() || red.src == approxDistinct {
			if limit == 0 {
				return false, nil // nothing more is answered
			}
			if seq < 0 {
				var err error
				if seq, err = f.Seq(ctx); err != nil {
					return false, err
				}
			}
			err := red.reduceChunk(ctx, f, s, seq)
			var over *overflowError
			if errors.As(err, &over) {
				// The group's reduction is refused: its row ends the answer.
				group, sums = group[:0], sums[:0]
				res.Rows = append(res.Rows, ViewRow{Error: "reduce_overflow_error", Reason: over.Error()})
				limit = 0
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		sums = append(sums, s)
		return true, nil
	}
	for _, r := range rs {
		if err := f.ScanParts(ctx, r, whole, onRow, onSum); err != nil {
			return nil, err
		}
		// Each key of Keys is its own group when grouping.
		if o.Keys != nil && level != -1 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return res, nil
}

// groupJSON returns the key of a row's group at level (-1: none, -2:
// exact keys, else the first level elements of an array key) as JSON.
func groupJSON(row *viewstore.Row, level int) (json.RawMessage, error) {
	switch {
	case level == -1:
		return nil, nil
	case level == -2 || len(row.KJSON) == 0 || row.KJSON[0] != '[':
		return row.KJSON, nil
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(row.KJSON, &elems); err != nil {
		return nil, err
	}
	if len(elems) > level {
		elems = elems[:level]
	}
	return json.Marshal(elems)
}

// errNeedRows: a group mixes chunk records with rows a built-in reduce
// must see one by one (values that are not plain numbers); the query is
// answered again from rows alone.
var errNeedRows = errors.New("view reduction needs every row")

// canUse says whether a chunk's record can stand for its rows in r's
// reductions: _count needs the count, _sum and _stats the statistics of
// plain numbers; _approx_count_distinct and JavaScript reduces reduce a
// chunk's rows once, kept by the file (reduceChunk).
func (r *reducer) canUse(s *viewstore.Summary) bool {
	switch r.src {
	case "_count", approxDistinct:
		return true
	case "_sum", "_stats":
		return s.Stats.Numeric
	}
	return r.isJS()
}

// isJS says whether r is a JavaScript reduce.
func (r *reducer) isJS() bool { return !builtinReduces[r.src] && !strings.HasPrefix(r.src, "_") }

// approxDistinct is the built-in reduce that counts distinct keys.
const approxDistinct = "_approx_count_distinct"

// reduceChunk sets s.Reduced to the reduction of chunk s's rows (a
// JavaScript one, or the count of its distinct keys), kept by the file
// between queries.
func (r *reducer) reduceChunk(ctx context.Context, f *viewstore.File, s *viewstore.Summary, seq int64) error {
	if v, ok := f.Reduction(s, seq); ok {
		s.Reduced = v
		return nil
	}
	rows := make([]reduceRow, 0, s.Count)
	err := f.ChunkRows(ctx, s, func(row *viewstore.Row) (bool, error) {
		rows = append(rows, reduceRow{key: row.Key, kjson: row.KJSON, id: row.ID, value: row.Value})
		return true, nil
	})
	if err != nil {
		return err
	}
	var v json.RawMessage
	if r.isJS() {
		v, err = r.reduceJS(rows)
	} else {
		v, err = r.reduce(rows)
	}
	if err != nil {
		return err
	}
	f.KeepReduction(s, seq, v)
	s.Reduced = v
	return nil
}

// reduceParts reduces a group of rows and chunk records (see canUse).
func (r *reducer) reduceParts(rows []reduceRow, sums []*viewstore.Summary) (json.RawMessage, error) {
	if len(sums) == 0 {
		return r.reduce(rows)
	}
	if r.isJS() {
		var parts []json.RawMessage
		if len(rows) > 0 {
			v, err := r.reduceJS(rows)
			if err != nil {
				return nil, err
			}
			parts = append(parts, v)
		}
		for _, s := range sums {
			parts = append(parts, s.Reduced)
		}
		if len(parts) == 1 {
			return parts[0], nil
		}
		return r.rereduceJS(parts)
	}
	if r.src == approxDistinct {
		return distinctParts(rows, sums)
	}
	var st stats
	if r.src != "_count" {
		for _, row := range rows {
			f, ok := plainNumber(row.value)
			if !ok {
				return nil, errNeedRows
			}
			st.add(f)
		}
	} else {
		st.Count = float64(len(rows))
	}
	for _, s := range sums {
		if r.src != "_count" {
			if st.Count == 0 {
				st.Min, st.Max = s.Stats.Min, s.Stats.Max
			}
			st.Min = min(st.Min, s.Stats.Min)
			st.Max = max(st.Max, s.Stats.Max)
			st.Sum += s.Stats.Sum
			st.Sumsqr += s.Stats.Sumsq
		}
		st.Count += float64(s.Count)
	}
	switch r.src {
	case "_count":
		return json.Marshal(int64(st.Count))
	case "_sum":
		return json.Marshal(st.Sum)
	}
	return json.Marshal(st)
}

// distinctParts counts the distinct keys of rows and chunks of one group.
// The parts are runs of one key order, so a key strictly between a
// chunk's first and last keys is in no other part: each chunk adds its
// count of distinct keys less its edge keys, and the edge keys are
// counted with the rows' keys.
func distinctParts(rows []reduceRow, sums []*viewstore.Summary) (json.RawMessage, error) {
	seen := make(map[string]bool, len(rows)+2*len(sums))
	for _, row := range rows {
		seen[string(row.key)] = true
	}
	inner := 0
	for _, s := range sums {
		var d int
		if err := json.Unmarshal(s.Reduced, &d); err != nil {
			return nil, fmt.Errorf("distinct keys of a chunk: %w", err)
		}
		edges := 2
		if bytes.Equal(s.First, s.Last) {
			edges = 1
		}
		inner += d - edges
		seen[string(s.First)], seen[string(s.Last)] = true, true
	}
	return json.Marshal(inner + len(seen))
}
