package localdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// DefaultPurgedInfosLimit is CouchDB's default _purged_infos_limit.
const DefaultPurgedInfosLimit = 1000

// PurgedInfo is one recorded purge request.
type PurgedInfo struct {
	PurgeSeq int64
	ID       string
	Revs     []string // the revisions asked for, purged or not
}

// Purge removes for good the named leaf revisions of each document, with
// the ancestors no other leaf shares, as CouchDB 3's _purge does, and
// returns for every requested id the revisions it removed (empty when the
// document is missing or none of its named revisions is a leaf). A
// document left without leaves is gone: no tombstone, no row in the
// changes feed. A document that keeps leaves moves to a new sequence with
// its new winner. Every purge request (one per id) gets the next purge_seq
// and is recorded; the oldest records beyond PurgedInfosLimit are dropped.
// The update sequence always advances, so feed readers see the change.
// Purges are local: a replication never carries them, and a later pull
// brings a purged document back only if it changes on the source (or the
// replication starts again from scratch).
//
// Ids are handled in sorted order, in one transaction. A revision CouchDB
// refuses (RevShape) is ErrBadRequest "Invalid rev format" and purges
// nothing.
func (db *DB) Purge(ctx context.Context, req map[string][]string) (map[string][]string, error) {
	ids := make([]string, 0, len(req))
	parsed := make(map[string][]revtree.Rev, len(req))
	for id, revs := range req {
		ids = append(ids, id)
		for _, s := range revs {
			r, err := revtree.ParseRev(s)
			if err != nil {
				return nil, err
			}
			parsed[id] = append(parsed[id], r)
		}
	}
	sort.Strings(ids)
	out := make(map[string][]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	err := db.writeDocs(ctx, attWriter{}, func(w *docWriter) error {
		return w.purge(ids, func(st *docState) []revtree.Rev { return parsed[st.id] }, req, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// purge applies one purge request per id (sorted): pick names the
// revisions to remove from a stored document. out gets the removed
// revisions of every id; the requests are recorded as purge infos, with
// the revisions of given (nil: those pick named).
func (w *docWriter) purge(ids []string, pick func(st *docState) []revtree.Rev, given map[string][]string, out map[string][]string) error {
	for _, id := range ids {
		if strings.HasPrefix(id, couchdoc.DesignPrefix) {
			w.design = true
		}
	}
	docs := make([]*couchdoc.Doc, len(ids))
	for i, id := range ids {
		docs[i] = &couchdoc.Doc{ID: id}
	}
	states, err := w.preload(docs)
	if err != nil {
		return err
	}
	asked := make(map[string][]string, len(ids))
	moved := false
	for _, id := range ids {
		out[id] = []string{}
		asked[id] = append([]string{}, given[id]...)
		st := states[id]
		if st == nil {
			continue
		}
		revs := pick(st)
		if given == nil {
			for _, r := range revs {
				asked[id] = append(asked[id], r.String())
			}
		}
		if st.docID == 0 {
			continue
		}
		removed := st.tree.RemoveLeaves(revs)
		for _, r := range removed {
			out[id] = append(out[id], r.String())
		}
		if len(removed) == 0 {
			continue
		}
		if err := w.purgeDoc(st); err != nil {
			return fmt.Errorf("purge %q: %w", id, err)
		}
		moved = moved || len(st.tree.Nodes) > 0
	}
	if !moved {
		w.seq++ // as CouchDB, so indexers and feeds notice the purge
	}
	w.fed = true
	if err := w.saveSeqFloor(); err != nil {
		return err
	}
	return w.recordPurges(ids, asked)
}

// RevShape reports whether s is a revision as CouchDB's _purge accepts it
// (couch_doc:parse_rev; see couchdoc.ParseRev).
func RevShape(s string) bool {
	_, _, err := couchdoc.ParseRev(s)
	return err == nil
}

// purgeDoc stores what RemoveLeaves left of a document: nothing, or the
// smaller tree at a new sequence; bodies of revisions no longer in the tree
// go (their attachment content waits for Compact). The indexes follow the
// winner, as for any write: a document purged whole leaves them, and a
// design document takes its indexes with it.
func (w *docWriter) purgeDoc(st *docState) error {
	oldWin, oldLive := st.win, st.live
	gone := revtree.Node{Deleted: true} // what the indexes see of a document purged whole
	wn := gone
	if len(st.tree.Nodes) > 0 {
		wn = st.tree.Nodes[st.tree.Leaves()[0]]
	}
	c := indexChange(st, oldWin, oldLive, wn)
	if err := w.unindex(st, c); err != nil {
		return err
	}
	w.count(st.live, st.dead, -1)
	if len(st.tree.Nodes) == 0 {
		if _, err := w.tx.ExecContext(w.ctx, "DELETE FROM expirations WHERE id = ?", st.id); err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(w.ctx, "DELETE FROM docs WHERE doc_id = ?", st.docID); err != nil {
			return err
		}
		return w.reindex(st, c, nil)
	}
	t := st.tree
	leaves := t.Leaves()
	conflicted := false
	for _, l := range leaves[1:] {
		conflicted = conflicted || !t.Nodes[l].Deleted
	}
	// CouchDB moves every remaining leaf to a new sequence, one each; the
	// document sits at the last.
	w.seq += int64(len(leaves))
	enc := t.Marshal()
	if _, err := w.Exec(qUpdateDoc, w.seq, wn.Rev.String(), wn.Deleted, conflicted, enc, st.docID); err != nil {
		return err
	}
	st.orig = enc
	st.live, st.dead = !wn.Deleted, wn.Deleted
	w.count(st.live, st.dead, 1)
	have, err := storedRevs(w.ctx, w.tx, st.docID)
	if err != nil {
		return err
	}
	for r := range have {
		if t.Find(mustRev(r)) < 0 {
			if _, err := w.Exec(qDeleteRev, st.docID, r); err != nil {
				return err
			}
		}
	}
	return w.reindex(st, c, nil)
}

// recordPurges appends one purge info per request and drops the oldest
// beyond the limit.
func (w *wtx) recordPurges(ids []string, req map[string][]string) error {
	var pseq, limit int64
	err := w.tx.QueryRowContext(w.ctx, `SELECT
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purge_seq'),
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purged_infos_limit')`).Scan(&pseq, &limit)
	if err != nil {
		return fmt.Errorf("read purge_seq: %w", err)
	}
	for _, id := range ids {
		pseq++
		b, err := json.Marshal(req[id])
		if err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(w.ctx, "INSERT INTO purged_infos (purge_seq, id, revs) VALUES (?, ?, ?)", pseq, id, string(b)); err != nil {
			return fmt.Errorf("record purge: %w", err)
		}
	}
	if _, err := w.tx.ExecContext(w.ctx, "UPDATE meta SET value = ? WHERE key = 'purge_seq'", strconv.FormatInt(pseq, 10)); err != nil {
		return err
	}
	return trimPurgedInfos(w.ctx, w.tx, pseq, limit)
}

func trimPurgedInfos(ctx context.Context, tx *sql.Tx, pseq, limit int64) error {
	_, err := tx.ExecContext(ctx, "DELETE FROM purged_infos WHERE purge_seq <= ?", pseq-limit)
	return err
}

// PurgedInfosLimit returns how many purge records the store keeps
// (CouchDB's _purged_infos_limit).
func (db *DB) PurgedInfosLimit(ctx context.Context) (int64, error) {
	var n int64
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purged_infos_limit'").Scan(&n)
	})
	return n, err
}

// SetPurgedInfosLimit changes and persists the limit, dropping the oldest
// records beyond it at once. n must be positive (else ErrBadRequest).
func (db *DB) SetPurgedInfosLimit(ctx context.Context, n int64) error {
	if n <= 0 {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "`purged_infos_limit` must be positive integer")
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.update(ctx, func(w *wtx) error {
		if _, err := w.tx.ExecContext(ctx, "UPDATE meta SET value = ? WHERE key = 'purged_infos_limit'", strconv.FormatInt(n, 10)); err != nil {
			return err
		}
		if err := w.bumpSeq(); err != nil {
			return err
		}
		var pseq int64
		if err := w.tx.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purge_seq'").Scan(&pseq); err != nil {
			return err
		}
		return trimPurgedInfos(ctx, w.tx, pseq, n)
	})
}

// PurgedInfos returns the kept purge records, oldest first.
func (db *DB) PurgedInfos(ctx context.Context) ([]PurgedInfo, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	var rows []struct {
		PurgeSeq int64  `db:"purge_seq"`
		ID       string `db:"id"`
		Revs     []byte `db:"revs"`
	}
	// At most purged_infos_limit rows (1000 by default): one Select.
	if err := db.reads.conns.SelectContext(ctx, &rows, "SELECT purge_seq, id, revs FROM purged_infos ORDER BY purge_seq"); err != nil {
		return nil, fmt.Errorf("purged infos: %w", err)
	}
	out := make([]PurgedInfo, len(rows))
	for i, r := range rows {
		out[i] = PurgedInfo{PurgeSeq: r.PurgeSeq, ID: r.ID}
		if err := json.Unmarshal(r.Revs, &out[i].Revs); err != nil {
			return nil, fmt.Errorf("purge record %d: %w", r.PurgeSeq, err)
		}
	}
	return out, nil
}
