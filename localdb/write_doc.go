package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/indexstore"
	"github.com/settee/settee/localdb/revtree"
)

// docWriter writes documents in one write transaction: their rows through
// the transaction (wtx), and through its parts what a document's write
// changes besides: the attachments it stores or names (attWriter) and the
// index entries of its winner (indexstore.Writer, hooked into the
// transaction). A _bulk_docs batch, a Batch, a purge and a conflict's
// resolution each go through one.
type docWriter struct {
	*wtx
	atts  attWriter
	index indexstore.Writer
}

// writeDocs runs fn in one write transaction through a document writer
// whose attachment part has atts' staged bodies and lazy flag.
func (db *DB) writeDocs(ctx context.Context, atts attWriter, fn func(w *docWriter) error) error {
	return db.update(ctx, func(t *wtx) error {
		w := &docWriter{wtx: t, atts: atts}
		w.atts.t = t
		if err := w.index.Begin(t, &db.ixs); err != nil {
			return err
		}
		t.addPart(&w.index)
		return fn(w)
	})
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
func (w *docWriter) saveDoc(st *docState, bodies []revWrite) (bool, error) {
	if strings.HasPrefix(st.id, couchdoc.DesignPrefix) {
		w.design = true
	}
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
	c := indexChange(st, oldWin, oldLive, wn)
	if err := w.unindex(st, c); err != nil {
		return false, err
	}
	w.seq++
	w.fed = true
	if st.docID == 0 {
		if err := w.insertNew(st, wn, conflicted, enc, bodies); err != nil {
			return false, err
		}
		return true, w.reindex(st, c, bodies)
	}
	if _, err := w.Exec(qUpdateDoc, w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc, st.docID); err != nil {
		return false, fmt.Errorf("update doc %q: %w", st.id, err)
	}
	st.orig = enc
	w.count(st.live, st.dead, -1)
	st.live, st.dead = !wn.Deleted, wn.Deleted
	w.count(st.live, st.dead, 1)
	for _, r := range removed {
		if _, err := w.Exec(qDeleteRev, st.docID, r.String()); err != nil {
			return false, fmt.Errorf("drop stemmed rev: %w", err)
		}
	}
	if err := w.insertBodies(st, bodies); err != nil {
		return false, err
	}
	return true, w.reindex(st, c, bodies)
}

// insertNew writes the rows of a document new to the store: buffered in
// w.inserts (multi-row inserts) unless it has attachments.
func (w *docWriter) insertNew(st *docState, wn revtree.Node, conflicted bool, enc []byte, bodies []revWrite) error {
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
	if _, err := w.Exec(qInsertDoc, id, st.id, w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc); err != nil {
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

func (w *docWriter) insertBodies(st *docState, bodies []revWrite) error {
	for i, b := range bodies {
		if st.tree.Find(mustRev(b.rev)) < 0 {
			continue // stemmed away at once
		}
		row, err := w.nextRow(&w.revRows, qMaxRevRow)
		if err != nil {
			return err
		}
		res, err := w.Exec(qInsertRev,
			row, st.docID, b.rev, b.body, len(b.atts) > 0)
		if err != nil {
			return fmt.Errorf("insert rev %s of %q: %w", b.rev, st.id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue // stored before, at another row
		}
		bodies[i].row = row
		for _, a := range b.atts {
			if _, err := w.Exec(qInsertRevAtt,
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

// indexChange is the change of st's winner from oldWin (live or not) to wn,
// as the index part sees it.
func indexChange(st *docState, oldWin string, oldLive bool, wn revtree.Node) indexstore.Change {
	return indexstore.Change{ID: st.id, Stored: st.docID != 0, OldWin: oldWin, OldLive: oldLive,
		NewWin: wn.Rev.String(), NewDeleted: wn.Deleted}
}

// unindex has the index part take the keys of st's old winner, read from
// the store, before change c is written.
func (w *docWriter) unindex(st *docState, c indexstore.Change) error {
	return w.index.Unindex(c, func(rev string) ([]byte, int64, error) { return w.winnerBody(st, rev, nil) })
}

// reindex records c's new winner in st and has the index part bring the
// indexes in line with it, once written: its body is one of bodies or read.
func (w *docWriter) reindex(st *docState, c indexstore.Change, bodies []revWrite) error {
	st.win = c.NewWin
	return w.index.Reindex(c, func(rev string) ([]byte, int64, error) { return w.winnerBody(st, rev, bodies) })
}

// winnerBody returns the body of revision rev and its rev_row: from the
// batch when it was stored by it, else read.
func (w *wtx) winnerBody(st *docState, rev string, bodies []revWrite) ([]byte, int64, error) {
	for _, b := range bodies {
		if b.rev == rev && b.row != 0 {
			return b.body, b.row, nil
		}
	}
	var body []byte
	var row int64
	err := w.QueryRow("SELECT body, rev_row FROM revs WHERE doc_id = ? AND rev = ?", st.docID, rev).Scan(&body, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("doc %q: winner %s has no body", st.id, rev)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read winner of %q: %w", st.id, err)
	}
	return body, row, nil
}
