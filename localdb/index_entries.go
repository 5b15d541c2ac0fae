package localdb

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// The index part buffers the entries it adds, as the transaction buffers
// new documents' rows (write_multirow.go), and writes them with multi-row
// INSERTs when the transaction flushes.

const entryCols = 3 // ix_id, key, rev_row

var (
	qInsertEntriesChunk = insertEntriesQuery(tEntries, multiRowChunk)
	qInsertFreshChunk   = insertEntriesQuery(tFresh, multiRowChunk)
)

// insertEntriesQuery inserts rows index entries into table (mango_entries
// or mango_fresh).
func insertEntriesQuery(table string, rows int) string {
	return multiInsert("INSERT OR IGNORE INTO "+table+" (ix_id, key, rev_row)", entryCols, rows, "")
}

// entryRow is a buffered mango_entries row.
type entryRow struct {
	ix     int64
	key    []byte
	revRow int64
}

// addEntry buffers a document's new index entry (for mango_fresh); key is
// copied.
func (iw *indexWriter) addEntry(ix int64, key []byte, revRow int64) {
	if len(iw.keyArena)+len(key) > cap(iw.keyArena) {
		iw.keyArena = make([]byte, 0, max(64<<10, len(key)))
	}
	start := len(iw.keyArena)
	iw.keyArena = append(iw.keyArena, key...)
	iw.fresh = append(iw.fresh, entryRow{ix, iw.keyArena[start:len(iw.keyArena):len(iw.keyArena)], revRow})
}

// flush writes the buffered entries (the transaction's flush, after its
// own rows, which the entries name) and counts the fresh ones.
func (iw *indexWriter) flush() error {
	if len(iw.entries) == 0 && len(iw.fresh) == 0 {
		return nil
	}
	entries, fresh := iw.entries, iw.fresh
	iw.entries, iw.fresh = nil, nil
	if err := iw.flushEntries(tEntries, entries); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	if err := iw.flushEntries(tFresh, fresh); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	iw.freshRows += int64(len(fresh))
	return nil
}

// flushEntries inserts buffered index entries into table, sorted by index
// then key: a batch's entries then go along each index's B-tree, page after
// page, rather than each to a random page.
func (iw *indexWriter) flushEntries(table string, rows []entryRow) error {
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
		s, err := iw.t.bind(q)
		if err != nil {
			return err
		}
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.ix, r.key, r.revRow)
		}
		if _, err := s.ExecContext(iw.t.ctx, args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
