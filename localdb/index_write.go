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
	if !wn.Deleted {
		body, err := w.winnerBody(st, newWin, bodies)
		if err != nil {
			return err
		}
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
			continue // the entry stays as it is
		}
		if prev != nil {
			if _, err := w.exec(qDeleteEntry, ix.id, prev); err != nil {
				return fmt.Errorf("unindex %q: %w", st.id, err)
			}
		}
		if ok {
			w.addEntry(ix.id, key, st.docID)
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
	body, err := w.winnerBody(st, oldWin, nil)
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
