package localdb

import (
	"fmt"
	"strings"

	"github.com/settee/settee/localdb/revtree"
)

// Bulk writes of new documents are the hot path of a pull replication.
// Their docs and revs rows are buffered and written with multi-row INSERTs,
// which costs far less than one statement per row. Every other statement
// of the transaction flushes the buffer first (see wtx.stmt), so nothing
// can observe the table without the buffered rows. A buffered document
// written again in the same batch has its row rewritten in the buffer.

// pendingChunk is how many rows one multi-row INSERT writes.
const pendingChunk = 100

const (
	docCols = 7 // doc_id, id, seq, winner, deleted, conflicted, tree
	revCols = 3 // doc_id, rev, body
)

func multiInsert(head string, cols, rows int, tail string) string {
	one := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return head + " VALUES " + one + strings.Repeat(", "+one, rows-1) + tail
}

func insertDocsQuery(rows int) string {
	return multiInsert("INSERT INTO docs (doc_id, id, seq, winner, deleted, conflicted, tree)", docCols, rows, "")
}

func insertRevsQuery(rows int) string {
	return multiInsert("INSERT INTO revs (doc_id, rev, body)", revCols, rows, " ON CONFLICT DO NOTHING")
}

var (
	qInsertDocsChunk = insertDocsQuery(pendingChunk)
	qInsertRevsChunk = insertRevsQuery(pendingChunk)
)

// pending holds buffered rows as flat argument lists.
type pending struct {
	docs []any
	revs []any
	// at is where each buffered document's row starts in docs, by doc_id.
	at map[int64]int
}

// addDoc buffers a docs row (docCols arguments, doc_id first).
func (p *pending) addDoc(row ...any) {
	if p.at == nil {
		p.at = make(map[int64]int)
	}
	p.at[row[0].(int64)] = len(p.docs)
	p.docs = append(p.docs, row...)
}

// updatePending rewrites the buffered row of document st, inserted earlier
// in this transaction and not flushed yet, and buffers its new bodies: a
// document met twice in a batch (two leaves of a conflict) then costs no
// flush, and the buffer stays in full-size inserts. It does nothing and
// reports false when the row is not buffered, or the write needs more than
// the buffer does (attachments, stemmed revisions to delete).
func (w *wtx) updatePending(st *docState, wn revtree.Node, conflicted bool, enc []byte, bodies []revWrite, stemmed int) bool {
	k, ok := w.pend.at[st.docID]
	if !ok || stemmed > 0 || hasAtts(bodies) {
		return false
	}
	row := w.pend.docs[k : k+docCols]
	row[2], row[3], row[4], row[5], row[6] = w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc
	for _, b := range bodies {
		if st.tree.Find(mustRev(b.rev)) >= 0 {
			w.pend.revs = append(w.pend.revs, st.docID, b.rev, b.body)
		}
	}
	return true
}

func (p *pending) empty() bool { return len(p.docs) == 0 && len(p.revs) == 0 }

// nextDocID hands out doc_ids explicitly, so buffered rows and rows written
// at once never compete for the same rowid.
func (w *wtx) nextDocID() (int64, error) {
	if !w.haveDocID {
		if err := w.tx.QueryRowContext(w.ctx, "SELECT COALESCE(MAX(doc_id), 0) FROM docs").Scan(&w.lastDocID); err != nil {
			return 0, fmt.Errorf("read doc ids: %w", err)
		}
		w.haveDocID = true
	}
	w.lastDocID++
	return w.lastDocID, nil
}

// flush writes the buffered rows.
func (w *wtx) flush() error {
	if w.pend.empty() {
		return nil
	}
	docs, revs := w.pend.docs, w.pend.revs
	w.pend = pending{}
	if err := w.flushRows(docs, docCols, qInsertDocsChunk, insertDocsQuery); err != nil {
		return fmt.Errorf("insert docs: %w", err)
	}
	if err := w.flushRows(revs, revCols, qInsertRevsChunk, insertRevsQuery); err != nil {
		return fmt.Errorf("insert revs: %w", err)
	}
	return nil
}

func (w *wtx) flushRows(args []any, cols int, chunkQuery string, query func(int) string) error {
	for len(args) > 0 {
		n := min(len(args)/cols, pendingChunk)
		var err error
		if n == pendingChunk {
			s, ok := w.db.stmts[chunkQuery]
			if !ok {
				return fmt.Errorf("statement not prepared")
			}
			_, err = w.tx.StmtContext(w.ctx, s).ExecContext(w.ctx, args[:n*cols]...)
		} else {
			_, err = w.tx.ExecContext(w.ctx, query(n), args[:n*cols]...)
		}
		if err != nil {
			return err
		}
		args = args[n*cols:]
	}
	return nil
}
