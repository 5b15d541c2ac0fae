package localdb

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/revtree"
)

// reindex brings the indexes in line with a document whose tree was just
// saved: called by saveDoc with the winner before the write (oldWin, ""
// for a new document, and whether it was live), after unindex. Nothing is
// done when the winner did not change; an index whose key for the document
// is the same for the old and the new winner is not written.
func (w *wtx) reindex(st *docState, oldWin string, oldLive bool, wn revtree.Node, bodies []revWrite) error {
	old := w.oldKeys
	if w.oldKeysOf != st {
		old = nil
	}
	w.oldKeysOf = nil
	newWin := wn.Rev.String()
	st.win = newWin
	if newWin == oldWin && oldLive == !wn.Deleted {
		return nil
	}
	design := mango.IsDesignID(st.id)
	set := w.indexes()
	if set.empty() && !design {
		return nil
	}
	var doc map[string]any
	var row int64
	if !wn.Deleted {
		body, r, err := w.winnerBody(st, newWin, bodies)
		if err != nil {
			return err
		}
		row = r
		if design {
			return w.designChanged(st.id, body)
		}
		if doc, err = decodeMembers(set, st.id, newWin, body); err != nil {
			doc = nil // not an object: in no index
		}
	} else if design {
		return w.designChanged(st.id, nil)
	}
	key := w.keyBuf[:0]
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
			if err := w.entryExec(qMoveEntry, qMoveFresh, row, ix.id, prev); err != nil {
				return fmt.Errorf("reindex %q: %w", st.id, err)
			}
			continue
		}
		if prev != nil {
			if err := w.entryExec(qDeleteEntry, qDeleteFresh, ix.id, prev); err != nil {
				return fmt.Errorf("unindex %q: %w", st.id, err)
			}
		}
		if ok {
			w.addEntry(ix.id, key, row)
		}
	}
	w.keyBuf = key
	return nil
}

// unindex computes the keys of a document's old winner when the winner
// changes, before its body may be stemmed away, for reindex to replace:
// the keys are computed again from its body (entries hold exactly what the
// definitions give for the winner, see CheckInvariants), so the entries
// need no index by document.
func (w *wtx) unindex(st *docState, oldWin string, oldLive bool, wn revtree.Node) error {
	w.oldKeysOf = nil
	if !oldLive || st.docID == 0 || mango.IsDesignID(st.id) || (wn.Rev.String() == oldWin && !wn.Deleted) {
		return nil
	}
	set := w.indexes()
	if set.empty() {
		return nil
	}
	body, _, err := w.winnerBody(st, oldWin, nil)
	if err != nil {
		return err
	}
	doc, err := decodeMembers(set, st.id, oldWin, body)
	if err != nil {
		return nil // not an object: in no index
	}
	w.oldKeys = w.oldKeys[:0]
	for _, ix := range set.list {
		if key, ok := entryKey(nil, ix.def, doc, st.id); ok {
			w.oldKeys = append(w.oldKeys, key)
		} else {
			w.oldKeys = append(w.oldKeys, nil)
		}
	}
	w.oldKeysOf = st
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
func (w *wtx) entryExec(main, fresh string, args ...any) error {
	res, err := w.exec(main, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	_, err = w.exec(fresh, args...)
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
