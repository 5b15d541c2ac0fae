package localdb

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/revtree"
)

// indexWriter is a write transaction's index part: it keeps the json
// indexes in line with the winners the document writer saves, creates,
// builds and drops indexes as design documents change, and buffers the
// entries it adds (index_entries.go). It hooks into the transaction
// (txPart): the fresh rows are counted and merged before the commit, and
// the index set it changed is published after it.
type indexWriter struct {
	t *wtx
	// ixs is the index set as changed by this transaction (nil: unchanged),
	// published on commit.
	ixs *ixSet
	// oldKeys are the index keys of oldKeysOf's old winner, one per index
	// of the set (nil: not in it), from unindex for reindex; keyBuf is
	// reindex's scratch key.
	oldKeys   [][]byte
	oldKeysOf *docState
	keyBuf    []byte
	// entries and fresh are the buffered rows of mango_entries (index
	// builds) and mango_fresh (documents' writes); keyArena holds the
	// keys of fresh (see addEntry).
	entries, fresh []entryRow
	keyArena       []byte
	// freshRows counts the rows this transaction inserted into mango_fresh.
	freshRows int64
}

// begin starts the index part of transaction t: the set it starts from is
// the file's, as another process may have changed the indexes since our
// last look.
func (iw *indexWriter) begin(t *wtx) error {
	iw.t = t
	gs, err := t.bind(qIndexGen)
	if err != nil {
		return err
	}
	if _, err := t.db.currentSet(t.ctx, t.tx, gs); err != nil {
		return err
	}
	t.addPart(iw)
	return nil
}

// beforeCommit records the fresh rows, merging them when due.
func (iw *indexWriter) beforeCommit() error { return iw.noteFresh() }

// afterCommit publishes the index set the transaction changed.
func (iw *indexWriter) afterCommit() {
	if iw.ixs != nil {
		iw.t.db.ixs.Store(iw.ixs)
	}
}

// save returns what restores the index set as it is now and drops the
// entries buffered since.
func (iw *indexWriter) save() func() {
	ixs := iw.ixs
	return func() {
		iw.ixs = ixs
		iw.entries, iw.fresh = nil, nil
	}
}

// reindex brings the indexes in line with a document whose tree was just
// saved: called by saveDoc with the winner before the write (oldWin, ""
// for a new document, and whether it was live), after unindex. Nothing is
// done when the winner did not change; an index whose key for the document
// is the same for the old and the new winner is not written.
func (iw *indexWriter) reindex(st *docState, oldWin string, oldLive bool, wn revtree.Node, bodies []revWrite) error {
	old := iw.oldKeys
	if iw.oldKeysOf != st {
		old = nil
	}
	iw.oldKeysOf = nil
	newWin := wn.Rev.String()
	st.win = newWin
	if newWin == oldWin && oldLive == !wn.Deleted {
		return nil
	}
	design := mango.IsDesignID(st.id)
	set := iw.indexes()
	if set.empty() && !design {
		return nil
	}
	var doc map[string]any
	var row int64
	if !wn.Deleted {
		body, r, err := iw.t.winnerBody(st, newWin, bodies)
		if err != nil {
			return err
		}
		row = r
		if design {
			return iw.designChanged(st.id, body)
		}
		if doc, err = decodeMembers(set, st.id, newWin, body); err != nil {
			doc = nil // not an object: in no index
		}
	} else if design {
		return iw.designChanged(st.id, nil)
	}
	key := iw.keyBuf[:0]
	for i, ix := range set.list {
		var ok bool
		if doc != nil {
			key, ok = entryKey(key[:0], ix.def, doc, st.id)
		}
		var prev []byte
		if old != nil {
			prev = old[i]
		}
		if ok && prev != nil && bytes.Equal(key, prev) {
			// The entry stays; it names the new winner's row.
			if err := iw.entryExec(qMoveEntry, qMoveFresh, row, ix.id, prev); err != nil {
				return fmt.Errorf("reindex %q: %w", st.id, err)
			}
			continue
		}
		if prev != nil {
			if err := iw.entryExec(qDeleteEntry, qDeleteFresh, ix.id, prev); err != nil {
				return fmt.Errorf("unindex %q: %w", st.id, err)
			}
		}
		if ok {
			iw.addEntry(ix.id, key, row)
		}
	}
	iw.keyBuf = key
	return nil
}

// unindex computes the keys of a document's old winner when the winner
// changes, before its body may be stemmed away, for reindex to replace:
// the keys are computed again from its body (entries hold exactly what the
// definitions give for the winner, see CheckInvariants), so the entries
// need no index by document.
func (iw *indexWriter) unindex(st *docState, oldWin string, oldLive bool, wn revtree.Node) error {
	iw.oldKeysOf = nil
	if !oldLive || st.docID == 0 || mango.IsDesignID(st.id) || (wn.Rev.String() == oldWin && !wn.Deleted) {
		return nil
	}
	set := iw.indexes()
	if set.empty() {
		return nil
	}
	body, _, err := iw.t.winnerBody(st, oldWin, nil)
	if err != nil {
		return err
	}
	doc, err := decodeMembers(set, st.id, oldWin, body)
	if err != nil {
		return nil // not an object: in no index
	}
	iw.oldKeys = iw.oldKeys[:0]
	for _, ix := range set.list {
		if key, ok := entryKey(nil, ix.def, doc, st.id); ok {
			iw.oldKeys = append(iw.oldKeys, key)
		} else {
			iw.oldKeys = append(iw.oldKeys, nil)
		}
	}
	iw.oldKeysOf = st
	return nil
}

const (
	// qDeleteEntry and qDeleteFresh delete one index entry.
	qDeleteEntry = "DELETE FROM mango_entries WHERE ix_id = ? AND key = ?"
	qDeleteFresh = "DELETE FROM mango_fresh WHERE ix_id = ? AND key = ?"
	// qMoveEntry and qMoveFresh point an entry at its document's new
	// winner.
	qMoveEntry = "UPDATE mango_entries SET rev_row = ? WHERE ix_id = ? AND key = ?"
	qMoveFresh = "UPDATE mango_fresh SET rev_row = ? WHERE ix_id = ? AND key = ?"
)

// entryExec runs main, the statement on an entry of mango_entries, and
// fresh, the same on mango_fresh, when main found no row: an entry is in
// one of the two (see index_fresh.go).
func (iw *indexWriter) entryExec(main, fresh string, args ...any) error {
	res, err := iw.t.exec(main, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	_, err = iw.t.exec(fresh, args...)
	return err
}

// winnerBody returns the body of revision rev and its rev_row: from the
// batch when it was stored by it, else read.
func (w *wtx) winnerBody(st *docState, rev string, bodies []revWrite) ([]byte, int64, error) {
	for _, b := range bodies {
		if b.rev == rev && b.row != 0 {
			return b.body, b.row, nil
		}
	}
	var body []byte
	var row int64
	err := w.queryRow("SELECT body, rev_row FROM revs WHERE doc_id = ? AND rev = ?", st.docID, rev).Scan(&body, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("doc %q: winner %s has no body", st.id, rev)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read winner of %q: %w", st.id, err)
	}
	return body, row, nil
}
