package localdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// wtx is one write transaction on the writer connection.
type wtx struct {
	db      *DB
	ctx     context.Context
	tx      *sql.Tx
	seq     int64                // highest sequence assigned so far
	bound   map[string]*sql.Stmt // the writer's statements bound to tx
	inserts insertBuffer         // buffered inserts of new documents
	// staged holds the attachment bodies streamed in before the batch.
	staged map[*couchdoc.Attachment]*stagedContent
	// docIDs and revRows hand out doc_id and rev_row (see nextRow).
	docIDs, revRows rowCounter
	// docDelta and delDelta change the stored document counts.
	docDelta, delDelta int64
	// fed is set when a committed change must wake feed readers.
	fed bool
	// ixs is the index set as changed by this transaction (nil: unchanged),
	// published on commit.
	ixs *ixSet
	// oldKeys are the index keys of oldKeysOf's old winner, one per index
	// of the set (nil: not in it), from unindex for reindex; keyBuf is
	// reindex's scratch key.
	oldKeys   [][]byte
	oldKeysOf *docState
	keyBuf    []byte
	// keyArena holds the keys of buffered entries (see addEntry).
	keyArena []byte
	// freshRows counts the rows this transaction inserted into mango_fresh.
	freshRows int64
	// lazy lets replicated stubs the store lacks be recorded as missing
	// (BulkDocsLazy).
	lazy bool
}

// update runs fn in one write transaction; fn's error rolls it back.
// Callers are inside enter/leave.
func (db *DB) update(ctx context.Context, fn func(w *wtx) error) error {
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
	s, err := w.bind(qMaxSeq)
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := s.QueryRowContext(ctx).Scan(&w.seq); err != nil {
		tx.Rollback()
		return fmt.Errorf("read update seq: %w", err)
	}
	// Another process may have changed the indexes since our last look.
	gs, err := w.bind(qIndexGen)
	if err != nil {
		tx.Rollback()
		return err
	}
	if _, err := db.currentSet(ctx, tx, gs); err != nil {
		tx.Rollback()
		return err
	}
	if err := fn(w); err != nil {
		tx.Rollback()
		return err
	}
	if err := w.flush(); err != nil {
		tx.Rollback()
		return err
	}
	if err := w.noteFresh(); err != nil {
		tx.Rollback()
		return err
	}
	if err := w.saveCounts(); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.afterCommit(ctx)
	if w.ixs != nil {
		db.ixs.Store(w.ixs)
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
		if _, err := w.exec(qAddCount, c.delta, c.key); err != nil {
			return fmt.Errorf("update %s: %w", c.key, err)
		}
	}
	return nil
}

// stmt returns the writer's prepared statement for query, bound to the
// transaction, after flushing the buffered rows. Callers hold db.wmu.
func (w *wtx) stmt(query string) (*sql.Stmt, error) {
	if err := w.flush(); err != nil {
		return nil, err
	}
	return w.bind(query)
}

// bind returns the writer's statement for query bound to the transaction,
// without flushing. A statement prepared at Open on the writer's single
// connection is reused as is (Tx.StmtContext finds it prepared on the
// transaction's connection), so only queries missing from writeQueries are
// compiled here, for this transaction only.
func (w *wtx) bind(query string) (*sql.Stmt, error) {
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

func (w *wtx) exec(query string, args ...any) (sql.Result, error) {
	s, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(w.ctx, args...)
}

func (w *wtx) queryRow(query string, args ...any) *sql.Row {
	s, err := w.stmt(query)
	if err != nil {
		return w.tx.QueryRowContext(w.ctx, query, args...)
	}
	return s.QueryRowContext(w.ctx, args...)
}

// docState is one document's tree as loaded for a write.
type docState struct {
	docID int64 // 0 for a document not yet stored
	seq   int64 // set by reads only
	// live and dead tell whether the stored winner is live or deleted
	// (both false for a document not yet stored).
	live, dead bool
	id         string
	win        string // the stored winner's rev ("" for a new document)
	tree       *revtree.Tree
	orig       []byte // the tree's encoding when loaded
}

func (st *docState) setTree(enc []byte) error {
	t, err := revtree.Unmarshal(enc)
	if err != nil {
		return fmt.Errorf("doc %q: %w", st.id, err)
	}
	st.tree, st.orig = t, enc
	if w := t.Winner(); w >= 0 {
		st.win = t.Nodes[w].Rev.String()
		st.dead = t.Nodes[w].Deleted
		st.live = !st.dead
	}
	return nil
}

// revWrite is a revision body to store with a document.
type revWrite struct {
	rev  string
	body []byte
	atts []*storedAtt
	// row is the rev_row the body was stored at, 0 until it is (or when
	// the revision already had one).
	row int64
}

// saveDoc stems the tree, writes the docs row at a new sequence, stores the
// new bodies and drops those of stemmed revisions. It reports false (and
// writes nothing) when the tree did not change.
func (w *wtx) saveDoc(st *docState, bodies []revWrite) (bool, error) {
	oldWin, oldLive := st.win, st.live
	removed := st.tree.Stem(w.db.RevsLimit())
	enc := st.tree.Marshal()
	if st.docID != 0 && string(enc) == string(st.orig) {
		return false, w.insertBodies(st, bodies)
	}
	win := st.tree.Winner()
	if win < 0 {
		return false, fmt.Errorf("doc %q: empty revision tree", st.id)
	}
	wn := st.tree.Nodes[win]
	conflicted := false
	for _, l := range st.tree.Leaves()[1:] {
		if !st.tree.Nodes[l].Deleted {
			conflicted = true
			break
		}
	}
	// The old winner's entries go before its body may be stemmed away.
	if err := w.unindex(st, oldWin, oldLive, wn); err != nil {
		return false, err
	}
	w.seq++
	w.fed = true
	if st.docID == 0 {
		if err := w.insertNew(st, wn, conflicted, enc, bodies); err != nil {
			return false, err
		}
		return true, w.reindex(st, oldWin, oldLive, wn, bodies)
	}
	if _, err := w.exec(qUpdateDoc, w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc, st.docID); err != nil {
		return false, fmt.Errorf("update doc %q: %w", st.id, err)
	}
	st.orig = enc
	w.count(st.live, st.dead, -1)
	st.live, st.dead = !wn.Deleted, wn.Deleted
	w.count(st.live, st.dead, 1)
	for _, r := range removed {
		if _, err := w.exec(qDeleteRev, st.docID, r.String()); err != nil {
			return false, fmt.Errorf("drop stemmed rev: %w", err)
		}
	}
	if err := w.insertBodies(st, bodies); err != nil {
		return false, err
	}
	return true, w.reindex(st, oldWin, oldLive, wn, bodies)
}

// insertNew writes the rows of a document new to the store: buffered in
// w.inserts (multi-row inserts) unless it has attachments.
func (w *wtx) insertNew(st *docState, wn revtree.Node, conflicted bool, enc []byte, bodies []revWrite) error {
	id, err := w.nextRow(&w.docIDs, qMaxDocID)
	if err != nil {
		return err
	}
	st.docID, st.orig = id, enc
	st.live, st.dead = !wn.Deleted, wn.Deleted
	w.count(st.live, st.dead, 1)
	if !hasAtts(bodies) {
		w.inserts.docs = append(w.inserts.docs, id, st.id, w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc)
		for i, b := range bodies {
			if st.tree.Find(mustRev(b.rev)) >= 0 {
				row, err := w.nextRow(&w.revRows, qMaxRevRow)
				if err != nil {
					return err
				}
				w.inserts.revs = append(w.inserts.revs, row, id, b.rev, b.body)
				bodies[i].row = row
			}
		}
		return nil
	}
	if _, err := w.exec(qInsertDoc, id, st.id, w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc); err != nil {
		return fmt.Errorf("insert doc %q: %w", st.id, err)
	}
	return w.insertBodies(st, bodies)
}

func hasAtts(bodies []revWrite) bool {
	for _, b := range bodies {
		if len(b.atts) > 0 {
			return true
		}
	}
	return false
}

func (w *wtx) count(live, dead bool, d int64) {
	if live {
		w.docDelta += d
	}
	if dead {
		w.delDelta += d
	}
}

func (w *wtx) insertBodies(st *docState, bodies []revWrite) error {
	for i, b := range bodies {
		if st.tree.Find(mustRev(b.rev)) < 0 {
			continue // stemmed away at once
		}
		row, err := w.nextRow(&w.revRows, qMaxRevRow)
		if err != nil {
			return err
		}
		res, err := w.exec(qInsertRev,
			row, st.docID, b.rev, b.body, len(b.atts) > 0)
		if err != nil {
			return fmt.Errorf("insert rev %s of %q: %w", b.rev, st.id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // stored before, at another row
		}
		bodies[i].row = row
		for _, a := range b.atts {
			if _, err := w.exec(qInsertRevAtt,
				row, a.Name, a.Digest, a.ContentType, a.Length, a.RevPos, a.Missing, a.Encoding); err != nil {
				return fmt.Errorf("insert attachment %q of %q: %w", a.Name, st.id, err)
			}
		}
	}
	return nil
}

func mustRev(s string) revtree.Rev {
	r, err := revtree.ParseRev(s)
	if err != nil {
		panic("localdb: bad internal rev " + s)
	}
	return r
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
