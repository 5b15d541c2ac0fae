package viewstore

import (
	"context"
	"encoding/json"
	"strconv"
)

// maxCachedReductions bounds the bytes of reductions a file keeps: past
// it the cache starts again empty.
const maxCachedReductions = 8 << 20

// reductions caches the JavaScript reductions of whole chunks (which
// CouchDB keeps in its B-tree's inner nodes), for the file's sequence
// seq. A batch committed by this process drops the entries of the chunks
// it changed; any other change of the file's sequence (another process's
// batch) drops them all.
type reductions struct {
	seq   int64
	bytes int
	byPos map[string]json.RawMessage
}

func posKey(view int, p *pos) string {
	return strconv.Itoa(view) + "\x00" + strconv.FormatInt(p.n, 10) + "\x00" + p.id + "\x00" + string(p.key)
}

// resetAt empties the cache unless it is of sequence seq. Call with f.mu held.
func (f *File) resetAt(seq int64) {
	if f.reds.byPos == nil || f.reds.seq != seq {
		f.reds = reductions{seq: seq, byPos: map[string]json.RawMessage{}}
	}
}

// Reduction returns the cached reduction of chunk s for a query that read
// the file at sequence seq.
func (f *File) Reduction(s *Summary, seq int64) (json.RawMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resetAt(seq)
	v, ok := f.reds.byPos[posKey(s.view, s.lo)]
	return v, ok
}

// KeepReduction caches v as the reduction of chunk s, computed by a query
// that read the file at sequence seq.
func (f *File) KeepReduction(s *Summary, seq int64, v json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resetAt(seq)
	if f.reds.bytes+len(v) > maxCachedReductions {
		f.reds = reductions{seq: seq, byPos: map[string]json.RawMessage{}}
	}
	k := posKey(s.view, s.lo)
	f.reds.bytes += len(v) - len(f.reds.byPos[k])
	f.reds.byPos[k] = v
}

// ChunkRows calls fn with each row of chunk s in key order.
func (f *File) ChunkRows(ctx context.Context, s *Summary, fn func(*Row) (bool, error)) error {
	return f.Scan(ctx, Range{View: s.view, from: s.lo, to: s.hi}, 0, fn)
}

// forget drops the cached reductions of the chunks at changed, after the
// batch that began at sequence from committed seq.
func (f *File) forget(from, seq int64, changed []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reds.byPos == nil || f.reds.seq != from {
		f.reds = reductions{seq: seq, byPos: map[string]json.RawMessage{}}
		return
	}
	for _, k := range changed {
		f.reds.bytes -= len(f.reds.byPos[k])
		delete(f.reds.byPos, k)
	}
	f.reds.seq = seq
}
