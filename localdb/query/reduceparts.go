package query

import (
	"encoding/json"
	"errors"

	"github.com/settee/settee/localdb/internal/viewstore"
)

// errNeedRows: a group mixes chunk records with rows a built-in reduce
// must see one by one (values that are not plain numbers); the query is
// answered again from rows alone.
var errNeedRows = errors.New("view reduction needs every row")

// canUse says whether a chunk's record can stand for its rows in r's
// reductions: _count needs the count, _sum and _stats the statistics of
// plain numbers. _approx_count_distinct and JavaScript reduces read rows.
func (r *reducer) canUse(s *viewstore.Summary) bool {
	switch r.src {
	case "_count":
		return true
	case "_sum", "_stats":
		return s.Stats.Numeric
	}
	return false
}

// reduceParts reduces a group of rows and chunk records (see canUse).
func (r *reducer) reduceParts(rows []reduceRow, sums []*viewstore.Summary) (json.RawMessage, error) {
	if len(sums) == 0 {
		return r.reduce(rows)
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
