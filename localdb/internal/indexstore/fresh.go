package indexstore

import (
	"fmt"
	"math"
)

// Fresh entries.
//
// A batch of new documents adds one entry per index to keys spread over
// the whole index (a customer id, an amount): written straight into
// mango_entries, 1,000 such entries dirty most leaf pages of a 100k-entry
// index, and every commit writes those pages to the WAL again (several
// times the bytes of the document itself with two such indexes;
// BenchmarkBulkDocsIndexes). So a document's new entries go to mango_fresh, a
// second B-tree of the same shape that stays small, and its rows are moved
// into mango_entries in key order, once per many commits, when it has
// grown past freshLimit: each page of mango_entries is then written once
// per merge, not once per commit. Index builds, whose entries arrive
// sorted, write mango_entries directly.
//
// An entry is in exactly one of the two tables: a query reads both, merged
// in key order by SQLite (a compound SELECT with ORDER BY, see localdb's scanPage);
// deleting or moving an entry tries mango_entries, then mango_fresh
// (entryExec). The merge runs in the commit that crosses the limit, so it
// is atomic with it, and readers see the entries before or after it.

// The merge limit's terms (variables for tests).
var (
	// freshMin is the fewest fresh rows worth a merge.
	freshMin int64 = 4096
	// freshFactor scales the limit with the square root of the entries:
	// a commit of k new entries dirties up to the fresh tree's pages, a
	// merge every page of the main one, and the sum per commit is least
	// near sqrt(2·k·entries); 64 fits 1,000-document batches over three
	// indexes, and single writes, which dirty a page each whatever the
	// limit, are cheaper still with it.
	freshFactor = 64.0
)

const (
	// qAddFreshRows counts inserted rows, returning the count since the
	// last merge.
	qAddFreshRows = "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'mango_fresh_rows' RETURNING CAST(value AS INTEGER), (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_count')"
	// qMergeFresh moves the fresh rows into mango_entries in key order.
	// OR IGNORE, because with the default ABORT (or REPLACE, whose NOT
	// NULL columns without defaults fall back to ABORT) SQLite copies
	// every page the statement touches into a statement journal first, to
	// undo a failure halfway, a large share of a merge's CPU
	// (BenchmarkBulkDocsIndexes). No row is in both
	// tables (see above), so none is ignored; mergeFresh checks the count
	// and falls back to qMergeReplace were one ever left behind.
	qMergeFresh = "INSERT OR IGNORE INTO mango_entries (ix_id, key, rev_row) SELECT ix_id, key, rev_row FROM mango_fresh ORDER BY ix_id, key"
	// qMergeReplace is the merge where the fresh row wins, as the newer.
	qMergeReplace   = "INSERT OR REPLACE INTO mango_entries (ix_id, key, rev_row) SELECT ix_id, key, rev_row FROM mango_fresh ORDER BY ix_id, key"
	qCountFresh     = "SELECT count(*) FROM mango_fresh"
	qClearFresh     = "DELETE FROM mango_fresh"
	qResetFreshRows = "UPDATE meta SET value = '0' WHERE key = 'mango_fresh_rows'"
)

// freshLimit is how many fresh rows are merged into an index set of
// entries rows (an estimate: documents times indexes).
func freshLimit(entries int64) int64 {
	return max(freshMin, int64(freshFactor*math.Sqrt(float64(max(entries, 0)))))
}

// noteFresh records the rows this transaction put in mango_fresh and
// merges the table when it has grown past freshLimit.
func (iw *Writer) noteFresh() error {
	if iw.freshRows == 0 {
		return nil
	}
	s, err := iw.t.Bind(qAddFreshRows)
	if err != nil {
		return err
	}
	var rows, docs int64
	if err := s.QueryRowContext(iw.t.Context(), iw.freshRows).Scan(&rows, &docs); err != nil {
		return fmt.Errorf("count fresh index entries: %w", err)
	}
	iw.freshRows = 0
	n := int64(1)
	if set := iw.indexes(); set != nil {
		n = int64(max(len(set.list), 1))
	}
	if rows <= freshLimit((docs+iw.t.DocDelta())*n) {
		return nil
	}
	if err := iw.mergeFresh(); err != nil {
		return fmt.Errorf("merge fresh index entries: %w", err)
	}
	return iw.clearFresh()
}

// mergeFresh copies mango_fresh into mango_entries.
func (iw *Writer) mergeFresh() error {
	var want int64
	if err := iw.t.QueryRow(qCountFresh).Scan(&want); err != nil {
		return err
	}
	res, err := iw.t.Exec(qMergeFresh)
	if err != nil {
		return err
	}
	if got, err := res.RowsAffected(); err != nil || got == want {
		return err
	}
	_, err = iw.t.Exec(qMergeReplace)
	return err
}

// clearFresh empties mango_fresh and its count.
func (iw *Writer) clearFresh() error {
	if _, err := iw.t.Exec(qClearFresh); err != nil {
		return fmt.Errorf("clear fresh index entries: %w", err)
	}
	if _, err := iw.t.Exec(qResetFreshRows); err != nil {
		return fmt.Errorf("clear fresh index entries: %w", err)
	}
	return nil
}

// SetFreshLimit makes every commit that leaves more than n rows in
// mango_fresh merge them, for a test; it returns a function restoring the
// limit.
func SetFreshLimit(n int64) (restore func()) {
	oldMin, oldFactor := freshMin, freshFactor
	freshMin, freshFactor = n, 0
	return func() { freshMin, freshFactor = oldMin, oldFactor }
}
