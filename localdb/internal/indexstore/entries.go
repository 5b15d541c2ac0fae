package indexstore

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/settee/settee/localdb/internal/multirow"
)

// The Writer buffers the entries it adds, as the transaction buffers new
// documents' rows, and writes them with multi-row INSERTs when the
// transaction flushes (Flush).

// Table names of the entries (see fresh.go).
const (
	TableEntries = "mango_entries"
	TableFresh   = "mango_fresh"
)

const entryCols = 3 // ix_id, key, rev_row

// insertEntriesQuery inserts rows index entries into table (mango_entries
// or mango_fresh).
func insertEntriesQuery(table string, rows int) string {
	return multirow.Query("INSERT OR IGNORE INTO "+table+" (ix_id, key, rev_row)", entryCols, rows, "")
}

var (
	qInsertEntriesChunk = insertEntriesQuery(TableEntries, multirow.Chunk)
	qInsertFreshChunk   = insertEntriesQuery(TableFresh, multirow.Chunk)
)

// entryRow is a buffered entry.
type entryRow struct {
	ix     int64
	key    []byte
	revRow int64
}

// addEntry buffers a document's new index entry (for mango_fresh); key is
// copied.
func (iw *Writer) addEntry(ix int64, key []byte, revRow int64) {
	if len(iw.keyArena)+len(key) > cap(iw.keyArena) {
		iw.keyArena = make([]byte, 0, max(64<<10, len(key)))
	}
	start := len(iw.keyArena)
	iw.keyArena = append(iw.keyArena, key...)
	iw.fresh = append(iw.fresh, entryRow{ix, iw.keyArena[start:len(iw.keyArena):len(iw.keyArena)], revRow})
}

// Flush writes the buffered entries and counts the fresh ones: the
// transaction calls it when it flushes, after its own rows, which the
// entries name.
func (iw *Writer) Flush() error {
	if len(iw.entries) == 0 && len(iw.fresh) == 0 {
		return nil
	}
	entries, fresh := iw.entries, iw.fresh
	iw.entries, iw.fresh = nil, nil
	if err := iw.flushEntries(TableEntries, entries); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	if err := iw.flushEntries(TableFresh, fresh); err != nil {
		return fmt.Errorf("insert index entries: %w", err)
	}
	iw.freshRows += int64(len(fresh))
	return nil
}

// flushEntries inserts buffered index entries into table, sorted by index
// then key: a batch's entries then go along each index's B-tree, page after
// page, rather than each to a random page.
func (iw *Writer) flushEntries(table string, rows []entryRow) error {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, func(a, b entryRow) int {
		if a.ix != b.ix {
			return cmp.Compare(a.ix, b.ix)
		}
		return bytes.Compare(a.key, b.key)
	})
	args := make([]any, 0, min(len(rows), multirow.Chunk)*entryCols)
	for len(rows) > 0 {
		n := multirow.Take(len(rows))
		q := qInsertEntriesChunk
		if table == TableFresh {
			q = qInsertFreshChunk
		}
		if n < multirow.Chunk {
			q = insertEntriesQuery(table, n)
		}
		s, err := iw.t.Bind(q)
		if err != nil {
			return err
		}
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, r.ix, r.key, r.revRow)
		}
		if _, err := s.ExecContext(iw.t.Context(), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}
