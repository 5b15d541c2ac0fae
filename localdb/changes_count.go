package localdb

import (
	"context"
	"database/sql"
	"fmt"
	gosync "sync"
)

// PendingChanges counts the documents whose latest change comes after
// seq: what a changes feed that stopped at seq leaves for the next one
// (CouchDB's "pending"). It reads the seq index only.
//
// A replication reading this store asks after every batch of its feed
// (settee serve answers each _changes request with it), and counting every
// later row each time scanned the seq index over and over: quadratic in
// the store's size (BenchmarkPendingCounts, and the server's CPU in the
// bench's 100k pull). So the store
// remembers its last few answers with the state they hold for, and counts
// only the rows between a remembered seq and the asked one when the state
// is the same.
func (db *DB) PendingChanges(ctx context.Context, seq int64) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	var n int64
	err := db.readTxIn(ctx, func(tx *sql.Tx) error {
		var st seqState
		if err := tx.QueryRowContext(ctx, qSeqState).Scan(&st.maxSeq, &st.purgeSeq); err != nil {
			return err
		}
		if seq >= st.maxSeq {
			n = 0
			return nil
		}
		if near, ok := db.pendingMemo.nearest(st, seq); ok && absDiff(near.seq, seq) < st.maxSeq-seq {
			var d int64
			lo, hi := min(near.seq, seq), max(near.seq, seq)
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM docs WHERE seq > ? AND seq <= ?", lo, hi).Scan(&d); err != nil {
				return err
			}
			if seq > near.seq {
				n = near.n - d
			} else {
				n = near.n + d
			}
		} else if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM docs WHERE seq > ?", seq).Scan(&n); err != nil {
			return err
		}
		db.pendingMemo.remember(pendingAnswer{state: st, seq: seq, n: n})
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("count documents: %w", err)
	}
	return n, nil
}

// qSeqState reads what the set of documents' sequences depends on: every
// write moves a document to a sequence above all others (so the highest
// changes), and only a purge removes a docs row (and it advances
// purge_seq).
const qSeqState = `SELECT COALESCE((SELECT MAX(seq) FROM docs), 0),
	COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purge_seq'), 0)`

// seqState identifies a state of the docs table's sequences.
type seqState struct{ maxSeq, purgeSeq int64 }

// pendingAnswer is an answer of PendingChanges: n documents after seq, in
// state.
type pendingAnswer struct {
	state  seqState
	seq, n int64
}

// pendingMemo holds PendingChanges' last answers: a few, for a few feeds
// read at once.
type pendingMemo struct {
	mu   gosync.Mutex
	last [4]pendingAnswer
	next int
}

// nearest returns the remembered answer for state whose seq is closest
// to seq.
func (m *pendingMemo) nearest(state seqState, seq int64) (pendingAnswer, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var best pendingAnswer
	found := false
	for _, a := range m.last {
		if a.state == state && (!found || absDiff(a.seq, seq) < absDiff(best.seq, seq)) {
			best, found = a, true
		}
	}
	return best, found
}

func (m *pendingMemo) remember(a pendingAnswer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last[m.next] = a
	m.next = (m.next + 1) % len(m.last)
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}
