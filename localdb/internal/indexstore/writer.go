package indexstore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/multirow"
)

// Tx is the write transaction a Writer works in (package localdb's).
// Statements run through Exec and QueryRow see the rows the transaction
// buffers, which they flush first; Bind does not flush. The transaction
// calls the Writer's hooks as it goes: Flush when it flushes, after its
// own rows; BeforeCommit; AfterCommit, before feed readers wake; Save
// around a savepoint.
type Tx interface {
	Context() context.Context
	// SQL is the transaction itself, for reads after a Flush.
	SQL() *sql.Tx
	Exec(query string, args ...any) (sql.Result, error)
	QueryRow(query string, args ...any) *sql.Row
	Bind(query string) (*sql.Stmt, error)
	Flush() error
	// DocDelta is how much the transaction changed the count of live
	// documents so far.
	DocDelta() int64
}

// Writer is a write transaction's index part: it keeps the json indexes
// in line with the winners the transaction's document writer saves
// (Unindex, Reindex), creates, builds and drops indexes as design
// documents change, and buffers the entries it adds. Its zero value is
// ready for Begin.
type Writer struct {
	t     Tx
	cache *Cache
	// ixs is the index set as changed by this transaction (nil: unchanged),
	// published on commit.
	ixs *Set
	// oldKeys are the index keys of document oldKeysOf's old winner, one
	// per index of the set (nil: not in it), from Unindex for Reindex;
	// keyBuf is Reindex's scratch key.
	oldKeys   [][]byte
	oldKeysOf string
	keyBuf    []byte
	// entries and fresh are the buffered rows of mango_entries (index
	// builds) and mango_fresh (documents' writes); keyArena holds the
	// keys of fresh (see addEntry).
	entries, fresh []entryRow
	keyArena       []byte
	// freshRows counts the rows this transaction inserted into mango_fresh.
	freshRows int64
}

// Begin starts the index part of transaction t, with the set of c as the
// file has it: another process may have changed the indexes since this
// one last looked.
func (iw *Writer) Begin(t Tx, c *Cache) error {
	iw.t, iw.cache = t, c
	gs, err := t.Bind(GenQuery)
	if err != nil {
		return err
	}
	_, err = c.Current(t.Context(), t.SQL(), gs)
	return err
}

// BeforeCommit records the fresh rows, merging them when due.
func (iw *Writer) BeforeCommit() error { return iw.noteFresh() }

// AfterCommit publishes the index set the transaction changed.
func (iw *Writer) AfterCommit() {
	if iw.ixs != nil {
		iw.cache.p.Store(iw.ixs)
	}
}

// Save returns what restores the index set as it is now and drops the
// entries buffered since, for a savepoint rolled back.
func (iw *Writer) Save() (restore func()) {
	ixs := iw.ixs
	return func() {
		iw.ixs = ixs
		iw.entries, iw.fresh = nil, nil
	}
}

// indexes returns the set this transaction sees.
func (iw *Writer) indexes() *Set {
	if iw.ixs != nil {
		return iw.ixs
	}
	return iw.cache.Load()
}

// Change is a document's winning revision before and after a write, as
// the indexes see it.
type Change struct {
	ID string
	// Stored is set when the document was in the store before the write.
	Stored bool
	// OldWin is the winner before the write ("" for a new document), and
	// OldLive whether it was live.
	OldWin  string
	OldLive bool
	// NewWin is the winner after it, and NewDeleted whether it is deleted
	// (a document purged whole is a deleted winner with no rev).
	NewWin     string
	NewDeleted bool
}

// Body returns the body of revision rev of the changed document and its
// rev_row.
type Body func(rev string) ([]byte, int64, error)

// Unindex computes the keys of a document's old winner when the winner
// changes, before its body may be stemmed away, for Reindex to replace:
// the keys are computed again from its body (entries hold exactly what the
// definitions give for the winner, see localdb's CheckInvariants), so the
// entries need no index by document.
func (iw *Writer) Unindex(c Change, body Body) error {
	iw.oldKeysOf = ""
	if !c.OldLive || !c.Stored || mango.IsDesignID(c.ID) || (c.NewWin == c.OldWin && !c.NewDeleted) {
		return nil
	}
	set := iw.indexes()
	if set.empty() {
		return nil
	}
	b, _, err := body(c.OldWin)
	if err != nil {
		return err
	}
	doc, err := decodeMembers(set, c.ID, c.OldWin, b)
	if err != nil {
		return nil // not an object: in no index
	}
	iw.oldKeys = iw.oldKeys[:0]
	for _, ix := range set.list {
		if key, ok := EntryKey(nil, ix.Def, doc, c.ID); ok {
			iw.oldKeys = append(iw.oldKeys, key)
		} else {
			iw.oldKeys = append(iw.oldKeys, nil)
		}
	}
	iw.oldKeysOf = c.ID
	return nil
}

// Reindex brings the indexes in line with a document whose tree was just
// saved, after Unindex of the same change. Nothing is done when the winner
// did not change; an index whose key for the document is the same for the
// old and the new winner is not written. A design document's change
// creates, rebuilds or drops its indexes.
func (iw *Writer) Reindex(c Change, body Body) error {
	old := iw.oldKeys
	if iw.oldKeysOf != c.ID {
		old = nil
	}
	iw.oldKeysOf = ""
	if c.NewWin == c.OldWin && c.OldLive == !c.NewDeleted {
		return nil
	}
	design := mango.IsDesignID(c.ID)
	set := iw.indexes()
	if set.empty() && !design {
		return nil
	}
	var doc map[string]any
	var row int64
	if !c.NewDeleted {
		b, r, err := body(c.NewWin)
		if err != nil {
			return err
		}
		row = r
		if design {
			return iw.designChanged(c.ID, b)
		}
		if doc, err = decodeMembers(set, c.ID, c.NewWin, b); err != nil {
			doc = nil // not an object: in no index
		}
	} else if design {
		return iw.designChanged(c.ID, nil)
	}
	key := iw.keyBuf[:0]
	for i, ix := range set.list {
		var ok bool
		if doc != nil {
			key, ok = EntryKey(key[:0], ix.Def, doc, c.ID)
		}
		var prev []byte
		if old != nil {
			prev = old[i]
		}
		if ok && prev != nil && bytes.Equal(key, prev) {
			// The entry stays; it names the new winner's row.
			if err := iw.entryExec(qMoveEntry, qMoveFresh, row, ix.ID, prev); err != nil {
				return fmt.Errorf("reindex %q: %w", c.ID, err)
			}
			continue
		}
		if prev != nil {
			if err := iw.entryExec(qDeleteEntry, qDeleteFresh, ix.ID, prev); err != nil {
				return fmt.Errorf("unindex %q: %w", c.ID, err)
			}
		}
		if ok {
			iw.addEntry(ix.ID, key, row)
		}
	}
	iw.keyBuf = key
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
// one of the two (see fresh.go).
func (iw *Writer) entryExec(main, fresh string, args ...any) error {
	res, err := iw.t.Exec(main, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	_, err = iw.t.Exec(fresh, args...)
	return err
}

// Queries are the statements a Writer runs, for the store to prepare when
// it opens, with the multi-row INSERTs of the given row counts (those up
// to multirow.Chunk).
func Queries(sizes []int) []string {
	q := []string{GenQuery, qDeleteEntry, qDeleteFresh, qMoveEntry, qMoveFresh,
		qAddFreshRows, qMergeFresh, qMergeReplace, qCountFresh, qClearFresh, qResetFreshRows}
	for _, n := range sizes {
		if n <= multirow.Chunk {
			q = append(q, insertEntriesQuery(TableEntries, n), insertEntriesQuery(TableFresh, n))
		}
	}
	return append(q, qInsertEntriesChunk, qInsertFreshChunk)
}
