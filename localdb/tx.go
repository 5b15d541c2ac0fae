package localdb

import (
	"context"
	"database/sql"
	"fmt"
)

// wtx is one write transaction on the writer connection: its statements,
// its sequence, the rowids it hands out, the document counts it changes
// and the docs and revs rows it buffers. What a document's write changes
// besides its rows (attachment staging, index maintenance) is held by the
// document writer (docWriter); a part with state of its own hooks into the
// transaction as a txPart.
type wtx struct {
	db      *DB
	ctx     context.Context
	tx      *sql.Tx
	seq     int64                // highest sequence assigned so far
	bound   map[string]*sql.Stmt // the writer's statements bound to tx
	inserts insertBuffer         // buffered inserts of new documents
	// docIDs and revRows hand out doc_id and rev_row (see nextRow).
	docIDs, revRows rowCounter
	// docDelta and delDelta change the stored document counts.
	docDelta, delDelta int64
	// fed is set when a committed change must wake feed readers.
	fed bool
	// design is set when the transaction writes or purges a design
	// document (DesignGeneration moves on its commit).
	design bool
	// parts are the hooked parts, in the order they were added.
	parts []txPart
}

// txPart is the per-transaction state of one of the store's parts (the
// indexes' indexstore.Writer) that the transaction drives through its life:
// buffered rows go in with the transaction's own, the part finishes its
// writes before the commit and publishes what changed after it, and a
// savepoint rolled back undoes the part's changes in memory with the
// transaction's.
type txPart interface {
	// Flush writes the part's buffered rows, after the transaction's own.
	Flush() error
	// BeforeCommit finishes the part's writes; its error rolls back.
	BeforeCommit() error
	// AfterCommit publishes what the transaction changed: called after
	// the commit, before feed readers wake.
	AfterCommit()
	// Save returns what restores the part as it is now (its buffered rows
	// dropped), for a savepoint that is rolled back.
	Save() (restore func())
}

// addPart hooks p into the transaction.
func (w *wtx) addPart(p txPart) { w.parts = append(w.parts, p) }

// update runs fn in one write transaction; fn's error rolls it back.
// Callers are inside enter/leave.
func (db *DB) update(ctx context.Context, fn func(w *wtx) error) error {
	return db.authErr(db.updateIn(ctx, fn))
}

func (db *DB) updateIn(ctx context.Context, fn func(w *wtx) error) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	// A panic in fn (a Batch's function is the app's code) must not leave
	// the writer's only connection inside the transaction.
	defer func() {
		if r := recover(); r != nil {
			tx.Rollback()
			panic(r)
		}
	}()
	w := &wtx{db: db, ctx: ctx, tx: tx}
	s, err := w.Bind(qMaxSeq)
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := s.QueryRowContext(ctx).Scan(&w.seq); err != nil {
		tx.Rollback()
		return fmt.Errorf("read update seq: %w", err)
	}
	if err := fn(w); err != nil {
		tx.Rollback()
		return err
	}
	if err := w.Flush(); err != nil {
		tx.Rollback()
		return err
	}
	for _, p := range w.parts {
		if err := p.BeforeCommit(); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := w.saveCounts(); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.afterCommit(ctx)
	if w.design {
		db.designGen.Add(1)
	}
	for _, p := range w.parts {
		p.AfterCommit()
	}
	if w.fed {
		db.committed(w.seq)
	}
	return nil
}

// saveCounts applies the batch's changes to the document counts.
func (w *wtx) saveCounts() error {
	for _, c := range []struct {
		key   string
		delta int64
	}{{"doc_count", w.docDelta}, {"doc_del_count", w.delDelta}} {
		if c.delta == 0 {
			continue
		}
		if _, err := w.Exec(qAddCount, c.delta, c.key); err != nil {
			return fmt.Errorf("update %s: %w", c.key, err)
		}
	}
	return nil
}

// count applies a document's move in or out of the live (live) or deleted
// (dead) documents, by d, to the counts.
func (w *wtx) count(live, dead bool, d int64) {
	if live {
		w.docDelta += d
	}
	if dead {
		w.delDelta += d
	}
}

// withSavepoint runs fn so that its writes are undone if it fails, when the
// document stores attachment bytes (the only multi-step per-doc write that
// can fail half way on bad input).
func (w *wtx) withSavepoint(needed bool, fn func() (string, error)) (string, error) {
	if !needed {
		return fn()
	}
	// Buffered rows go in before the savepoint, or a rollback would drop them.
	if err := w.Flush(); err != nil {
		return "", err
	}
	if err := w.execBound(qSavepoint); err != nil {
		return "", err
	}
	// The savepoint undoes the rows fn wrote; what fn changed in memory (rows
	// buffered after the flush above, counts, the sequence, the parts'
	// state) is undone here, or a buffered row of the failed document would
	// be flushed later.
	seq, docDelta, delDelta := w.seq, w.docDelta, w.delDelta
	restores := make([]func(), len(w.parts))
	for i, p := range w.parts {
		restores[i] = p.Save()
	}
	rev, err := fn()
	if err != nil {
		w.inserts = insertBuffer{}
		w.seq, w.docDelta, w.delDelta = seq, docDelta, delDelta
		for _, restore := range restores {
			restore()
		}
		if rerr := w.execBound(qRollbackTo); rerr != nil {
			return "", rerr
		}
	}
	if rerr := w.execBound(qRelease); rerr != nil {
		return "", rerr
	}
	return rev, err
}

// execBound runs a prepared statement without flushing the buffered rows.
func (w *wtx) execBound(query string) error {
	s, err := w.Bind(query)
	if err != nil {
		return err
	}
	_, err = s.ExecContext(w.ctx)
	return err
}

// Context, SQL and DocDelta make wtx the indexstore.Tx of the index part.
func (w *wtx) Context() context.Context { return w.ctx }
func (w *wtx) SQL() *sql.Tx             { return w.tx }
func (w *wtx) DocDelta() int64          { return w.docDelta }

// stmt returns the writer's prepared statement for query, bound to the
// transaction, after flushing the buffered rows. Callers hold db.wmu.
func (w *wtx) stmt(query string) (*sql.Stmt, error) {
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return w.Bind(query)
}

// bind returns the writer's statement for query bound to the transaction,
// without flushing. A statement prepared at Open on the writer's single
// connection is reused as is (Tx.StmtContext finds it prepared on the
// transaction's connection), so only queries missing from writeQueries are
// compiled here, for this transaction only.
func (w *wtx) Bind(query string) (*sql.Stmt, error) {
	if s, ok := w.bound[query]; ok {
		return s, nil
	}
	if w.bound == nil {
		w.bound = make(map[string]*sql.Stmt)
	}
	var ts *sql.Stmt
	if s, ok := w.db.stmts[query]; ok {
		ts = w.tx.StmtContext(w.ctx, s)
	} else {
		s, err := w.tx.PrepareContext(w.ctx, query)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", query, err)
		}
		ts = s
	}
	w.bound[query] = ts
	return ts, nil
}

func (w *wtx) Exec(query string, args ...any) (sql.Result, error) {
	s, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(w.ctx, args...)
}

func (w *wtx) QueryRow(query string, args ...any) *sql.Row {
	s, err := w.stmt(query)
	if err != nil {
		return w.tx.QueryRowContext(w.ctx, query, args...)
	}
	return s.QueryRowContext(w.ctx, args...)
}

// bumpSeq advances the update sequence without a document moving, as
// CouchDB does for a change of a database setting (revs_limit,
// purged_infos_limit):
// indexers and feed readers see that something changed. The floor keeps
// the sequence where it is once no document sits at it.
func (w *wtx) bumpSeq() error {
	w.seq++
	w.fed = true
	return w.saveSeqFloor()
}

// saveSeqFloor records the transaction's sequence as the least update
// sequence the store reports from now on.
func (w *wtx) saveSeqFloor() error {
	_, err := w.tx.ExecContext(w.ctx, "UPDATE meta SET value = ? WHERE key = 'seq_floor'", w.seq)
	return err
}
