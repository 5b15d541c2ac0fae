package localdb

import (
	"fmt"

	"github.com/settee/settee/localdb/internal/multirow"
)

// Bulk writes of new documents are the hot path of a pull replication.
// Their docs and revs rows are buffered and written with multi-row INSERTs
// (package multirow), which costs far less than one statement per row.
// Every other statement of the transaction flushes the buffer first (see
// wtx.stmt), so nothing can observe the table without the buffered rows.

const (
	docCols = 7 // doc_id, id, seq, winner, deleted, conflicted, tree
	revCols = 4 // rev_row, doc_id, rev, body
)

func insertDocsQuery(rows int) string {
	return multirow.Query("INSERT INTO docs (doc_id, id, seq, winner, deleted, conflicted, tree)", docCols, rows, "")
}

func insertRevsQuery(rows int) string {
	return multirow.Query("INSERT INTO revs (rev_row, doc_id, rev, body)", revCols, rows, " ON CONFLICT DO NOTHING")
}

var (
	qInsertDocsChunk = insertDocsQuery(multirow.Chunk)
	qInsertRevsChunk = insertRevsQuery(multirow.Chunk)
)

// insertBuffer holds buffered docs and revs rows as flat argument lists
// (the index entries are buffered by the index part, indexstore.Writer).
type insertBuffer struct {
	docs []any
	revs []any
}

func (p *insertBuffer) empty() bool {
	return len(p.docs) == 0 && len(p.revs) == 0
}

// rowCounter is the highest rowid of a table handed out in a transaction,
// once read.
type rowCounter struct {
	last int64
	read bool
}

// nextRow hands out the rowids of docs and revs explicitly (maxQuery reads
// the table's highest), so buffered rows and rows written at once never
// compete for one, and a buffered revision's row is known before it is
// written (index entries name it).
func (w *wtx) nextRow(c *rowCounter, maxQuery string) (int64, error) {
	if !c.read {
		s, err := w.Bind(maxQuery)
		if err != nil {
			return 0, err
		}
		if err := s.QueryRowContext(w.ctx).Scan(&c.last); err != nil {
			return 0, fmt.Errorf("read row ids: %w", err)
		}
		c.read = true
	}
	c.last++
	return c.last, nil
}

// flush writes the buffered rows: the transaction's, then its parts'.
func (w *wtx) Flush() error {
	if !w.inserts.empty() {
		docs, revs := w.inserts.docs, w.inserts.revs
		w.inserts = insertBuffer{}
		if err := w.flushRows(docs, docCols, qInsertDocsChunk, insertDocsQuery); err != nil {
			return fmt.Errorf("insert docs: %w", err)
		}
		if err := w.flushRows(revs, revCols, qInsertRevsChunk, insertRevsQuery); err != nil {
			return fmt.Errorf("insert revs: %w", err)
		}
	}
	for _, p := range w.parts {
		if err := p.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// flushRows writes args (rows of cols values) with the prepared multi-row
// INSERTs: multirow.Chunk rows at a time, then the rest as a few
// power-of-two sized statements, so no INSERT is compiled in the
// transaction.
func (w *wtx) flushRows(args []any, cols int, chunkQuery string, query func(int) string) error {
	for len(args) > 0 {
		n := multirow.Take(len(args) / cols)
		q := chunkQuery
		if n < multirow.Chunk {
			q = query(n)
		}
		s, err := w.Bind(q)
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
