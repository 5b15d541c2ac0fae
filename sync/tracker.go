package sync

import (
	"encoding/json"
	gosync "sync"
)

// seqTracker finds the sequence below which every change is written, while
// batches complete in any order. Batches are numbered in feed order as they
// are read; the safe sequence only moves over a contiguous prefix of
// completed batches. Sequences are never compared or parsed, only kept in
// feed order.
type seqTracker struct {
	mu       gosync.Mutex
	next     int64                     // number of the next batch to read
	first    int64                     // lowest batch not yet completed
	done     map[int64]json.RawMessage // completed batches above first
	safe     json.RawMessage           // last seq of the completed prefix
	inflight int64                     // changes rows read, not yet completed
	rows     map[int64]int64
}

func newSeqTracker(start json.RawMessage) *seqTracker {
	return &seqTracker{done: map[int64]json.RawMessage{}, rows: map[int64]int64{}, safe: start}
}

// add registers the next batch in feed order and returns its number.
func (t *seqTracker) add(rows int) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.next
	t.next++
	t.rows[n] = int64(rows)
	t.inflight += int64(rows)
	return n
}

// complete marks batch n, whose last sequence is seq, as written. It
// returns the new safe sequence and true when the prefix advanced.
func (t *seqTracker) complete(n int64, seq json.RawMessage) (json.RawMessage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inflight -= t.rows[n]
	delete(t.rows, n)
	t.done[n] = seq
	advanced := false
	for {
		s, ok := t.done[t.first]
		if !ok {
			break
		}
		delete(t.done, t.first)
		t.first++
		if s != nil {
			t.safe = s
		}
		advanced = true
	}
	return t.safe, advanced
}

// safeSeq returns the sequence below which everything is written.
func (t *seqTracker) safeSeq() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.safe
}

// pending returns the number of rows read and not yet completed, and
// whether every batch read so far completed.
func (t *seqTracker) pending() (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inflight, t.first == t.next
}
