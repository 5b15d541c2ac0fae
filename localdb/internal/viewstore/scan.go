package viewstore

import (
	"context"
	"strings"
)

// Bound is one end of a key range: the encoded key, and the document id
// that bounds the rows of that key (HasID false: every id).
type Bound struct {
	Key   []byte
	ID    string
	HasID bool
}

// Range selects rows of one view in collation order. Start and End are in
// the scan's order: with Descending, Start is the high end.
type Range struct {
	View         int
	Start, End   *Bound // nil: unbounded
	InclusiveEnd bool
	Descending   bool
	// from and to bound the positions too (a run of chunks): from <= row
	// < to, nil unbounded.
	from, to *pos
}

// Row is one view row.
type Row struct {
	Key   []byte // encoded key
	ID    string
	KJSON []byte
	Value []byte
}

// where returns the SQL condition and arguments of r.
func (r Range) where() (string, []any) {
	conds := []string{"view = ?"}
	args := []any{r.View}
	// In a run of chunks the search is bounded by the run's positions:
	// "+key" keeps SQLite from bounding it by the keys instead (it uses
	// one range of the primary key).
	key := "key"
	if r.from != nil || r.to != nil {
		key = "+key"
	}
	add := func(b *Bound, op string) {
		if b.HasID {
			conds = append(conds, "("+key+", docid) "+op+" (?, ?)")
			args = append(args, b.Key, b.ID)
			return
		}
		// Without an id the bound is the key's whole group: >= key for a
		// low bound, and for a high bound every id of key included (<=)
		// or excluded (<).
		conds = append(conds, key+" "+op+" ?")
		args = append(args, b.Key)
	}
	lowOp, highOp := ">=", "<"
	if r.InclusiveEnd {
		highOp = "<="
	}
	low, high := r.Start, r.End
	if r.Descending {
		low, high = r.End, r.Start
		lowOp, highOp = ">", "<="
		if r.InclusiveEnd {
			lowOp = ">="
		}
	}
	if low != nil {
		add(low, lowOp)
	}
	if high != nil {
		add(high, highOp)
	}
	if r.from != nil {
		conds = append(conds, "(key, docid, n) >= (?, ?, ?)")
		args = append(args, r.from.key, r.from.id, r.from.n)
	}
	if r.to != nil {
		conds = append(conds, "(key, docid, n) < (?, ?, ?)")
		args = append(args, r.to.key, r.to.id, r.to.n)
	}
	return strings.Join(conds, " AND "), args
}

// Scan reads the rows of r in order, after skipping skip of them, until fn
// returns false or an error.
func (f *File) Scan(ctx context.Context, r Range, skip int64, fn func(*Row) (bool, error)) error {
	where, args := r.where()
	order := "ASC"
	if r.Descending {
		order = "DESC"
	}
	q := "SELECT key, docid, kjson, value FROM rows WHERE " + where +
		" ORDER BY view, key " + order + ", docid " + order + ", n " + order + " LIMIT -1 OFFSET ?"
	rows, err := f.query(ctx, q, append(args, skip)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var row Row
		if err := rows.Scan(&row.Key, &row.ID, &row.KJSON, &row.Value); err != nil {
			return err
		}
		more, err := fn(&row)
		if err != nil || !more {
			return err
		}
	}
	return rows.Err()
}

// Count returns how many rows r holds.
func (f *File) Count(ctx context.Context, r Range) (int64, error) {
	where, args := r.where()
	var n int64
	err := f.queryRow(ctx, "SELECT count(*) FROM rows WHERE "+where, args...).Scan(&n)
	return n, err
}

// BeforeByCount is Before counting the rows (the reference Before is
// checked against).
func (f *File) BeforeByCount(ctx context.Context, view int, b *Bound, descending bool) (int64, error) {
	if b == nil {
		return 0, nil
	}
	// A range that ends, exclusively, at b.
	return f.Count(ctx, Range{View: view, End: b, Descending: descending})
}
