package localdb

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/revtree"
)

// reindex brings the indexes in line with a document whose tree was just
// saved: called by saveDoc with the winner before the write (oldWin, ""
// for a new document, and whether it was live). Nothing is done when the
// winner did not change.
func (w *wtx) reindex(st *docState, oldWin string, oldLive bool, wn revtree.Node, bodies []revWrite) error {
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
	var body []byte
	if !wn.Deleted {
		var err error
		if body, err = w.winnerBody(st, newWin, bodies); err != nil {
			return err
		}
	}
	if design {
		return w.designChanged(st.id, body)
	}
	if wn.Deleted {
		return nil
	}
	doc, err := decodeForIndex(st.id, newWin, body)
	if err != nil {
		return nil // not an object: in no index
	}
	var key []byte
	for _, ix := range set.list {
		var ok bool
		if key, ok = entryKey(key[:0], ix.def, doc, st.id); ok {
			w.pend.entries = append(w.pend.entries, ix.id, append([]byte(nil), key...), st.docID)
		}
	}
	return nil
}

// unindex deletes the entries of a document's old winner when the winner
// changes: the keys are computed again from its body (entries hold exactly
// what the definitions give for the winner, see CheckInvariants), so the
// entries need no index by document.
func (w *wtx) unindex(st *docState, oldWin string, oldLive bool, wn revtree.Node) error {
	if !oldLive || st.docID == 0 || mango.IsDesignID(st.id) || (wn.Rev.String() == oldWin && !wn.Deleted) {
		return nil
	}
	set := w.indexes()
	if set.empty() {
		return nil
	}
	body, err := w.winnerBody(st, oldWin, nil)
	if err != nil {
		return err
	}
	doc, err := decodeForIndex(st.id, oldWin, body)
	if err != nil {
		return nil // not an object: in no index
	}
	var key []byte
	for _, ix := range set.list {
		var ok bool
		if key, ok = entryKey(key[:0], ix.def, doc, st.id); ok {
			if _, err := w.exec(qDeleteEntry, ix.id, key); err != nil {
				return fmt.Errorf("unindex %q: %w", st.id, err)
			}
		}
	}
	return nil
}

// qDeleteEntry deletes one index entry.
const qDeleteEntry = "DELETE FROM mango_entries WHERE ix_id = ? AND key = ?"

// winnerBody returns the body of revision rev: from the batch, else stored.
func (w *wtx) winnerBody(st *docState, rev string, bodies []revWrite) ([]byte, error) {
	for _, b := range bodies {
		if b.rev == rev {
			return b.body, nil
		}
	}
	var body []byte
	err := w.queryRow("SELECT body FROM revs WHERE doc_id = ? AND rev = ?", st.docID, rev).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("doc %q: winner %s has no body", st.id, rev)
	}
	if err != nil {
		return nil, fmt.Errorf("read winner of %q: %w", st.id, err)
	}
	return body, nil
}
