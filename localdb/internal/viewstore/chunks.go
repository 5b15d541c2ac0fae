package viewstore

import (
	"bytes"
	"context"
	"database/sql"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
)

// A view's rows are also cut into chunks, a second level over the sorted
// rows as a B+tree's inner nodes are: a chunk covers the rows from its low
// position (lo) to the next chunk's, and records how many rows it holds,
// the keys of its first and last rows, and the statistics of their values
// when all are plain numbers. An offset is then the counts of the chunks
// before a key plus a count inside one chunk, and a reduction over a range
// reads the records of the chunks wholly inside it and the rows of the two
// at its ends, instead of every row (SQLite's B-tree keeps no counts).
//
// The first chunk of a view starts at the lowest position (an empty key),
// so every row has a chunk. Chunks are kept in the same transaction as the
// rows; the meta key chunks_seq records the sequence they reflect, and a
// file whose chunks_seq is not its update_seq (a file of an older Settee,
// or one another program updated) has its chunks rebuilt when opened.

// chunkTarget is the number of rows a chunk is cut to; a chunk is split
// above twice that and merged into its predecessor below a quarter.
var chunkTarget atomic.Int64

func init() { chunkTarget.Store(256) }

// SetChunkRows sets the number of rows chunks are cut to (tests make
// small chunks to cross their boundaries) and returns a func restoring
// the previous one. Chunks already cut stay as they are: every size
// gives the same answers.
func SetChunkRows(n int) func() {
	was := chunkTarget.Swap(int64(max(n, 1)))
	return func() { chunkTarget.Store(was) }
}

// pos is the position of a row: the B-tree's order (key, docid, n).
type pos struct {
	key []byte
	id  string
	n   int64
}

func (p pos) cmp(q pos) int {
	if c := bytes.Compare(p.key, q.key); c != 0 {
		return c
	}
	if c := strings.Compare(p.id, q.id); c != 0 {
		return c
	}
	switch {
	case p.n < q.n:
		return -1
	case p.n > q.n:
		return 1
	}
	return 0
}

// lowest is the position of a view's first chunk, below every row (an
// encoded key is never empty).
var lowest = pos{key: []byte{}, n: -1}

// Stats are the statistics of a chunk's values, kept when every value is
// a plain JSON number (Numeric): what _sum and _stats need.
type Stats struct {
	Numeric              bool
	Sum, Min, Max, Sumsq float64
}

// add adds value f to stats of count values.
func (s *Stats) add(f float64, count int64) {
	if count == 0 {
		s.Min, s.Max = f, f
	}
	s.Sum += f
	s.Min = math.Min(s.Min, f)
	s.Max = math.Max(s.Max, f)
	s.Sumsq += f * f
}

// merge adds t (of tn values) to s (of sn values).
func (s *Stats) merge(sn int64, t Stats, tn int64) {
	s.Numeric = s.Numeric && t.Numeric
	switch {
	case tn == 0:
		return
	case sn == 0:
		s.Min, s.Max = t.Min, t.Max
	default:
		s.Min = math.Min(s.Min, t.Min)
		s.Max = math.Max(s.Max, t.Max)
	}
	s.Sum += t.Sum
	s.Sumsq += t.Sumsq
}

// PlainNumber reads a JSON value that is a plain number.
func PlainNumber(b []byte) (float64, bool) {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

// chunk is one chunk as a batch holds it.
type chunk struct {
	lo          pos
	count       int64
	first, last []byte // encoded keys of the first and last rows
	stats       Stats
	// dirty: rows were removed, the record must be read again from the
	// rows; changed: the record must be written.
	dirty, changed bool
}

// addRow records a row added to c.
func (c *chunk) addRow(key, value []byte) {
	c.changed = true
	if c.dirty {
		c.count++
		return
	}
	if c.count == 0 || bytes.Compare(key, c.first) < 0 {
		c.first = append([]byte(nil), key...)
	}
	if c.count == 0 || bytes.Compare(key, c.last) > 0 {
		c.last = append([]byte(nil), key...)
	}
	if c.count == 0 {
		c.stats = Stats{Numeric: true}
	}
	if f, ok := PlainNumber(value); ok && c.stats.Numeric {
		c.stats.add(f, c.count)
	} else {
		c.stats.Numeric = false
	}
	c.count++
}

// viewChunks are the chunks of one view a batch changes, in order.
type viewChunks struct {
	list    []*chunk
	removed []pos // stored chunks merged away
}

// find returns the chunk holding position p.
func (vc *viewChunks) find(p pos) *chunk {
	i := sort.Search(len(vc.list), func(i int) bool { return vc.list[i].lo.cmp(p) > 0 })
	return vc.list[max(i-1, 0)]
}

const chunkColumns = "lo_key, lo_id, lo_n, count, first, last, numeric, sum, min, max, sumsq"

func scanChunk(rows *sql.Rows) (*chunk, error) {
	c := &chunk{}
	var numeric int
	err := rows.Scan(&c.lo.key, &c.lo.id, &c.lo.n, &c.count, &c.first, &c.last, &numeric, &c.stats.Sum, &c.stats.Min, &c.stats.Max, &c.stats.Sumsq)
	c.stats.Numeric = numeric != 0
	if c.lo.key == nil {
		c.lo.key = []byte{}
	}
	return c, err
}

// loadChunks reads the chunks of view in order.
func loadChunks(ctx context.Context, q querier, view int) ([]*chunk, error) {
	return scanChunks(q.QueryContext(ctx, "SELECT "+chunkColumns+" FROM chunks WHERE view = ? ORDER BY lo_key, lo_id, lo_n", view))
}

// scanChunks reads the chunks a query of chunkColumns returns, and closes
// its rows.
func scanChunks(rows *sql.Rows, err error) ([]*chunk, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []*chunk
	for rows.Next() {
		c, err := scanChunk(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, c)
	}
	return list, rows.Err()
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// chunksOf returns the batch's chunks of view, read on first use; a view
// without any gets its first chunk.
func (b *Batch) chunksOf(view int) (*viewChunks, error) {
	if vc := b.chunks[view]; vc != nil {
		return vc, nil
	}
	list, err := loadChunks(b.ctx, b.tx, view)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		list = []*chunk{{lo: lowest, changed: true, stats: Stats{Numeric: true}}}
	}
	vc := &viewChunks{list: list}
	b.chunks[view] = vc
	return vc, nil
}

// saveChunks reads dirty chunks again, splits the big ones, merges the
// small ones and writes what changed.
func (b *Batch) saveChunks() error {
	for view, vc := range b.chunks {
		var list []*chunk
		for i, c := range vc.list {
			if !c.dirty && c.count <= 2*chunkTarget.Load() {
				list = append(list, c)
				continue
			}
			var hi *pos
			if i+1 < len(vc.list) {
				hi = &vc.list[i+1].lo
			}
			pieces, err := recut(b.ctx, b.tx, view, c, hi)
			if err != nil {
				return err
			}
			list = append(list, pieces...)
		}
		vc.list = list[:1]
		least := chunkTarget.Load() / 4
		for _, c := range list[1:] {
			prev := vc.list[len(vc.list)-1]
			if c.count > 0 && c.count >= least {
				vc.list = append(vc.list, c)
				continue
			}
			if c.count > 0 {
				if prev.count == 0 {
					prev.first = c.first
				}
				prev.last = c.last
				prev.stats.merge(prev.count, c.stats, c.count)
				prev.count += c.count
			}
			prev.changed = true
			vc.removed = append(vc.removed, c.lo)
		}
		for _, p := range vc.removed {
			b.changed = append(b.changed, posKey(view, &p))
			if _, err := b.tx.ExecContext(b.ctx, "DELETE FROM chunks WHERE view = ? AND lo_key = ? AND lo_id = ? AND lo_n = ?", view, p.key, p.id, p.n); err != nil {
				return err
			}
		}
		for _, c := range vc.list {
			if c.changed {
				b.changed = append(b.changed, posKey(view, &c.lo))
				if err := writeChunk(b.ctx, b.tx, view, c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func writeChunk(ctx context.Context, q querier, view int, c *chunk) error {
	numeric := 0
	if c.stats.Numeric {
		numeric = 1
	}
	_, err := q.ExecContext(ctx, "INSERT OR REPLACE INTO chunks (view, "+chunkColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		view, c.lo.key, c.lo.id, c.lo.n, c.count, c.first, c.last, numeric, c.stats.Sum, c.stats.Min, c.stats.Max, c.stats.Sumsq)
	return err
}

// recut reads the rows of chunk c (up to hi, nil for the view's end) and
// returns its records: itself, or the pieces it is split into.
func recut(ctx context.Context, q querier, view int, c *chunk, hi *pos) ([]*chunk, error) {
	where, args := "view = ? AND (key, docid, n) >= (?, ?, ?)", []any{view, c.lo.key, c.lo.id, c.lo.n}
	if hi != nil {
		where += " AND (key, docid, n) < (?, ?, ?)"
		args = append(args, hi.key, hi.id, hi.n)
	}
	rows, err := q.QueryContext(ctx, "SELECT key, docid, n, value FROM rows WHERE "+where+" ORDER BY key, docid, n", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	target := chunkTarget.Load()
	pieces := max(c.count/target, 1)
	if c.count <= 2*target {
		pieces = 1
	}
	size := (c.count + pieces - 1) / pieces
	cur := &chunk{lo: c.lo, changed: true, stats: Stats{Numeric: true}}
	out := []*chunk{cur}
	for rows.Next() {
		var p pos
		var value []byte
		if err := rows.Scan(&p.key, &p.id, &p.n, &value); err != nil {
			return nil, err
		}
		if cur.count >= size && int64(len(out)) < pieces {
			cur = &chunk{lo: p, changed: true, stats: Stats{Numeric: true}}
			out = append(out, cur)
		}
		cur.addRow(p.key, value)
	}
	return out, rows.Err()
}

// rebuildChunks cuts the rows of every view into chunks anew.
func rebuildChunks(ctx context.Context, q querier) error {
	if _, err := q.ExecContext(ctx, "DELETE FROM chunks"); err != nil {
		return err
	}
	rows, err := q.QueryContext(ctx, "SELECT view, key, docid, n, value FROM rows ORDER BY view, key, docid, n")
	if err != nil {
		return err
	}
	var out []*chunk
	var views []int
	for rows.Next() {
		var p pos
		var view int
		var value []byte
		if err := rows.Scan(&view, &p.key, &p.id, &p.n, &value); err != nil {
			rows.Close()
			return err
		}
		switch {
		case len(views) == 0 || views[len(views)-1] != view:
			out = append(out, &chunk{lo: lowest, stats: Stats{Numeric: true}})
			views = append(views, view)
		case out[len(out)-1].count >= chunkTarget.Load():
			out = append(out, &chunk{lo: p, stats: Stats{Numeric: true}})
			views = append(views, view)
		}
		out[len(out)-1].addRow(p.key, value)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i, c := range out {
		if err := writeChunk(ctx, q, views[i], c); err != nil {
			return err
		}
	}
	return nil
}
