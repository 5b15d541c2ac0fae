package localdb

import (
	"fmt"
	"strings"
)

// Bulk writes of new documents are the hot path of a pull replication.
// Their docs and revs rows are buffered and written with multi-row INSERTs,
// which costs far less than one statement per row. Every other statement
// of the transaction flushes the buffer first (see wtx.stmt), so nothing
// can observe the table without the buffered rows.

// pendingChunk is how many rows one multi-row INSERT writes.
const pendingChunk = 100

const (
	docCols   = 7 // doc_id, id, seq, winner, deleted, conflicted, tree
	revCols   = 3 // doc_id, rev, body
	entryCols = 3 // ix_id, key, doc_id
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

func insertEntriesQuery(rows int) string {
	return multiInsert("INSERT OR IGNORE INTO mango_entries (ix_id, key, doc_id)", entryCols, rows, "")
}

var (
	qInsertDocsChunk    = insertDocsQuery(pendingChunk)
	qInsertRevsChunk    = insertRevsQuery(pendingChunk)
	qInsertEntriesChunk = insertEntriesQuery(pendingChunk)
)

// pending holds buffered rows as flat argument lists.
type pending struct {
	docs    []any
	revs    []any
	entries []any // mango_entries rows
}

func (p *pending) empty() bool { return len(p.docs) == 0 && len(p.revs) == 0 && len(p.entries) == 0 }

// nextDocID hands out doc_ids explicitly, so buffered rows and rows written
// at once never compete for the same rowid.
func (w *wtx) nextDocID() (int64, error) {
	if !w.haveDocID {
		s, err := w.bind(qMaxDocID)
		if err != nil {
			return 0, err
		}
		if err := s.QueryRowContext(w.ctx).Scan(&w.lastDocID); err != nil {
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
	docs, revs, entries := w.pend.docs, w.pend.revs, w.pend.entries
	w.pend = pending{}
	if err := w.flushRows(docs, docCols, qInsertDocsChunk, insertDocsQuery); err != nil {
		return fmt.Errorf("insert docs: %w", err)
	}
	if err := w.flushRows(revs, revCols, qInsertRevsChunk, insertRevsQuery); err != nil {
		return fmt.Errorf("insert revs: %w", err)
	}
	if err := w.flushRows(entries, entryCols, qInsertEntriesChunk, insertEntriesQuery); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	return nil
}

// flushRows writes args (rows of cols values) with the prepared multi-row
// INSERTs: pendingChunk rows at a time, then the rest as a few power-of-two
// sized statements, so no INSERT is compiled in the transaction.
func (w *wtx) flushRows(args []any, cols int, chunkQuery string, query func(int) string) error {
	for len(args) > 0 {
		rows := len(args) / cols
		q := chunkQuery
		n := pendingChunk
		if rows < pendingChunk {
			n = 1
			for n*2 <= rows {
				n *= 2
			}
			q = query(n)
		}
		s, err := w.bind(q)
		if err != nil {
			return err
		}
		if _, err := s.ExecContext(w.ctx, args[:n*cols]...); err != nil {
			return err
		}
		args = args[n*cols:]
	}
	return nil
}
