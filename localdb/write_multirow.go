package localdb

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Bulk writes of new documents are the hot path of a pull replication.
// Their docs and revs rows are buffered and written with multi-row INSERTs,
// which costs far less than one statement per row. Every other statement
// of the transaction flushes the buffer first (see wtx.stmt), so nothing
// can observe the table without the buffered rows.

// multiRowChunk is how many rows one multi-row INSERT writes.
const multiRowChunk = 100

const (
	docCols   = 7 // doc_id, id, seq, winner, deleted, conflicted, tree
	revCols   = 4 // rev_row, doc_id, rev, body
	entryCols = 3 // ix_id, key, rev_row
)

func multiInsert(head string, cols, rows int, tail string) string {
	one := "(?" + strings.Repeat(", ?", cols-1) + ")"
	return head + " VALUES " + one + strings.Repeat(", "+one, rows-1) + tail
}

func insertDocsQuery(rows int) string {
	return multiInsert("INSERT INTO docs (doc_id, id, seq, winner, deleted, conflicted, tree)", docCols, rows, "")
}

func insertRevsQuery(rows int) string {
	return multiInsert("INSERT INTO revs (rev_row, doc_id, rev, body)", revCols, rows, " ON CONFLICT DO NOTHING")
}

// insertEntriesQuery inserts rows index entries into table (mango_entries
// or mango_fresh).
func insertEntriesQuery(table string, rows int) string {
	return multiInsert("INSERT OR IGNORE INTO "+table+" (ix_id, key, rev_row)", entryCols, rows, "")
}

var (
	qInsertDocsChunk    = insertDocsQuery(multiRowChunk)
	qInsertRevsChunk    = insertRevsQuery(multiRowChunk)
	qInsertEntriesChunk = insertEntriesQuery(tEntries, multiRowChunk)
	qInsertFreshChunk   = insertEntriesQuery(tFresh, multiRowChunk)
)

// insertBuffer holds buffered rows as flat argument lists.
type insertBuffer struct {
	docs    []any
	revs    []any
	entries []entryRow // mango_entries rows (index builds)
	fresh   []entryRow // mango_fresh rows (documents' writes)
}

// entryRow is a buffered mango_entries row.
type entryRow struct {
	ix     int64
	key    []byte
	revRow int64
}

func (p *insertBuffer) empty() bool {
	return len(p.docs) == 0 && len(p.revs) == 0 && len(p.entries) == 0 && len(p.fresh) == 0
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
		s, err := w.bind(maxQuery)
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

// flush writes the buffered rows.
func (w *wtx) flush() error {
	if w.inserts.empty() {
		return nil
	}
	docs, revs, entries, fresh := w.inserts.docs, w.inserts.revs, w.inserts.entries, w.inserts.fresh
	w.inserts = insertBuffer{}
	if err := w.flushRows(docs, docCols, qInsertDocsChunk, insertDocsQuery); err != nil {
		return fmt.Errorf("insert docs: %w", err)
	}
	if err := w.flushRows(revs, revCols, qInsertRevsChunk, insertRevsQuery); err != nil {
		return fmt.Errorf("insert revs: %w", err)
	}
	if err := w.flushEntries(tEntries, entries); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	if err := w.flushEntries(tFresh, fresh); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	w.freshRows += int64(len(fresh))
	return nil
}

// flushRows writes args (rows of cols values) with the prepared multi-row
// INSERTs: multiRowChunk rows at a time, then the rest as a few power-of-two
// sized statements, so no INSERT is compiled in the transaction.
func (w *wtx) flushRows(args []any, cols int, chunkQuery string, query func(int) string) error {
	for len(args) > 0 {
		rows := len(args) / cols
		q := chunkQuery
		n := multiRowChunk
		if rows < multiRowChunk {
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

// addEntry buffers a document's new index entry (for mango_fresh); key is
// copied.
func (w *wtx) addEntry(ix int64, key []byte, revRow int64) {
	if len(w.keyArena)+len(key) > cap(w.keyArena) {
		w.keyArena = make([]byte, 0, max(64<<10, len(key)))
	}
	start := len(w.keyArena)
	w.keyArena = append(w.keyArena, key...)
	w.inserts.fresh = append(w.inserts.fresh, entryRow{ix, w.keyArena[start:len(w.keyArena):len(w.keyArena)], revRow})
}

// flushEntries inserts buffered index entries into table, sorted by index
// then key: a batch's entries then go along each index's B-tree, page after
// page, rather than each to a random page.
func (w *wtx) flushEntries(table string, rows []entryRow) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b entryRow) int {
		if a.ix != b.ix {
			return cmp.Compare(a.ix, b.ix)
		}
		return bytes.Compare(a.key, b.key)
	})
	args := make([]any, 0, min(len(rows), multiRowChunk)*entryCols)
	for len(rows) > 0 {
		n := multiRowChunk
		q := qInsertEntriesChunk
		if table == tFresh {
			q = qInsertFreshChunk
		}
		if len(rows) < multiRowChunk {
			n = 1
			for n*2 <= len(rows) {
				n *= 2
			}
			q = insertEntriesQuery(table, n)
		}
		s, err := w.bind(q)
		if err != nil {
			return err
		}
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.ix, r.key, r.revRow)
		}
		if _, err := s.ExecContext(w.ctx, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
