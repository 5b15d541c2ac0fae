package viewstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// bounds returns the low and high bounds of r in key order and whether
// each includes the rows at it, as where writes them.
func (r Range) bounds() (low *Bound, lowIncl bool, high *Bound, highIncl bool) {
	if r.Descending {
		return r.End, r.InclusiveEnd, r.Start, true
	}
	return r.Start, true, r.End, r.InclusiveEnd
}

// cmpBound compares position p with bound b (its key, and its id when b
// has one).
func cmpBound(p pos, b *Bound) int {
	if c := bytes.Compare(p.key, b.Key); c != 0 || !b.HasID {
		return c
	}
	return strings.Compare(p.id, b.ID)
}

// above says whether p is at or above the low bound; below, at or below
// the high one. Both are monotone in the rows' order.
func (r Range) above(p pos) bool {
	low, incl, _, _ := r.bounds()
	if low == nil {
		return true
	}
	c := cmpBound(p, low)
	return c > 0 || (c == 0 && incl)
}

func (r Range) below(p pos) bool {
	_, _, high, incl := r.bounds()
	if high == nil {
		return true
	}
	c := cmpBound(p, high)
	return c < 0 || (c == 0 && incl)
}

// Before returns how many rows of view come before b in the scan order
// (CouchDB's offset): below it ascending, above it descending. It sums the
// counts of the chunks before b and counts rows in the one b falls in.
func (f *File) Before(ctx context.Context, view int, b *Bound, descending bool) (int64, error) {
	if b == nil {
		return 0, nil
	}
	if !descending {
		return f.countBelow(ctx, view, b, false)
	}
	total, err := f.Rows(ctx, view)
	if err != nil {
		return 0, err
	}
	n, err := f.countBelow(ctx, view, b, true)
	return total - n, err
}

// countBelow counts the rows of view below b (at b too when incl).
func (f *File) countBelow(ctx context.Context, view int, b *Bound, incl bool) (int64, error) {
	op := "<"
	if incl {
		op = "<="
	}
	lo, row, bound, args := "lo_key", "key", "?2", []any{view, b.Key}
	if b.HasID {
		lo, row, bound, args = "(lo_key, lo_id)", "(key, docid)", "(?2, ?3)", append(args, b.ID)
	}
	// The last chunk starting below b holds the boundary; the ones before
	// it are wholly below. (Parameters, not a join: SQLite bounds an index
	// search by row values only when they are constants.)
	var c pos
	err := f.queryRow(ctx, "SELECT lo_key, lo_id, lo_n FROM chunks WHERE view = ?1 AND "+lo+" "+op+" "+bound+
		" ORDER BY lo_key DESC, lo_id DESC, lo_n DESC LIMIT 1", args...).Scan(&c.key, &c.id, &c.n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // no chunk, no rows
	}
	if err != nil {
		return 0, err
	}
	if c.key == nil {
		c.key = []byte{}
	}
	at := fmt.Sprintf("(?%d, ?%d, ?%d)", len(args)+1, len(args)+2, len(args)+3)
	args = append(args, c.key, c.id, c.n)
	var n int64
	err = f.queryRow(ctx, `SELECT
		(SELECT COALESCE(sum(count), 0) FROM chunks WHERE view = ?1 AND (lo_key, lo_id, lo_n) < `+at+`)
		+ (SELECT count(*) FROM rows WHERE view = ?1 AND (key, docid, n) >= `+at+` AND `+row+` `+op+` `+bound+`)`, args...).Scan(&n)
	return n, err
}

// Summary is the record of a chunk wholly inside a scanned range: its
// row count, the encoded keys of its first and last rows in key order,
// and its values' statistics.
type Summary struct {
	Count       int64
	First, Last []byte
	Stats       Stats
	// Reduced is the chunk's JavaScript reduction, set by the caller.
	Reduced json.RawMessage
	view    int
	lo, hi  *pos
}

// ScanParts reads the rows of r in order as Scan does, except that for a
// chunk wholly inside r for which whole returns true it gives the chunk's
// Summary to sum instead of its rows. It stops when fn or sum returns
// false or an error. sum may query the file (no statement is open when it
// is called); fn may not.
func (f *File) ScanParts(ctx context.Context, r Range, whole func(*Summary) bool, fn func(*Row) (bool, error), sum func(*Summary) (bool, error)) error {
	list, err := f.chunksOver(ctx, r)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return f.Scan(ctx, r, 0, fn)
	}
	type part struct {
		lo, hi *pos
		s      *Summary // nil: rows to scan
	}
	var parts []part
	for i, c := range list {
		var hi *pos
		if i+1 < len(list) {
			hi = &list[i+1].lo
		}
		if (hi != nil && !r.above(*hi)) || !r.below(c.lo) {
			continue // wholly outside
		}
		p := part{lo: &c.lo, hi: hi}
		_, _, high, _ := r.bounds()
		inside := c.count > 0 && r.above(c.lo) && ((hi == nil && high == nil) || (hi != nil && r.below(*hi)))
		if inside {
			s := &Summary{Count: c.count, First: c.first, Last: c.last, Stats: c.stats, view: r.View, lo: &c.lo, hi: hi}
			if whole(s) {
				p.s = s
			}
		}
		if n := len(parts); n > 0 && p.s == nil && parts[n-1].s == nil {
			parts[n-1].hi = hi // extends the run of rows
			continue
		}
		parts = append(parts, p)
	}
	if r.Descending {
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
	}
	for _, p := range parts {
		more := true
		if p.s != nil {
			more, err = sum(p.s)
		} else {
			run := r
			run.from, run.to = p.lo, p.hi
			err = f.Scan(ctx, run, 0, func(row *Row) (bool, error) {
				more, err = fn(row)
				return more, err
			})
		}
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// chunksOver reads the chunks of r's view that may hold rows of r, in
// order: from the last one starting below its low key (or the first) to
// the first one starting above its high key (which bounds the one before
// it). Empty when the view has none.
func (f *File) chunksOver(ctx context.Context, r Range) ([]*chunk, error) {
	low, _, high, _ := r.bounds()
	where, args := "view = ?1", []any{r.View}
	if low != nil {
		var c pos
		err := f.queryRow(ctx, "SELECT lo_key, lo_id, lo_n FROM chunks WHERE view = ? AND lo_key < ? ORDER BY lo_key DESC, lo_id DESC, lo_n DESC LIMIT 1",
			r.View, low.Key).Scan(&c.key, &c.id, &c.n)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, nil
		case err != nil:
			return nil, err
		}
		if c.key == nil {
			c.key = []byte{}
		}
		where += " AND (lo_key, lo_id, lo_n) >= (?2, ?3, ?4)"
		args = append(args, c.key, c.id, c.n)
	}
	if high != nil {
		where += fmt.Sprintf(" AND lo_key <= ?%d", len(args)+1)
		args = append(args, high.Key)
	}
	list, err := f.readChunks(ctx, where, args)
	if err != nil || high == nil || len(list) == 0 {
		return list, err
	}
	last := list[len(list)-1].lo
	next, err := f.readChunks(ctx, "view = ?1 AND (lo_key, lo_id, lo_n) > (?2, ?3, ?4) ORDER BY lo_key, lo_id, lo_n LIMIT 1", []any{r.View, last.key, last.id, last.n})
	return append(list, next...), err
}

// readChunks reads the chunks matching where, in order.
func (f *File) readChunks(ctx context.Context, where string, args []any) ([]*chunk, error) {
	if !strings.Contains(where, "ORDER BY") {
		where += " ORDER BY lo_key, lo_id, lo_n"
	}
	return scanChunks(f.query(ctx, "SELECT "+chunkColumns+" FROM chunks WHERE "+where, args...))
}

// FirstRow returns the first row of s in the scan order.
func (f *File) FirstRow(ctx context.Context, s *Summary, descending bool) (*Row, error) {
	var out *Row
	err := f.Scan(ctx, Range{View: s.view, Descending: descending, from: s.lo, to: s.hi}, 0, func(row *Row) (bool, error) {
		out = row
		return false, nil
	})
	return out, err
}
