package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
	"github.com/settee/settee/localdb/revtree"
)

// rtx is one read transaction. The read pool's prepared statements are
// bound to it on first use and kept for its life, so a transaction that
// reads many documents binds each statement once.
type rtx struct {
	ctx   context.Context
	db    *DB
	pool  *readPool // the pool tx is of
	tx    *sql.Tx
	bound map[string]*sql.Stmt
	// bodies holds revision bodies read ahead (OpenRevsBatch); a nil
	// value is a body looked for and not stored.
	bodies map[bodyKey]*bodyRow
}

func (db *DB) newRtx(ctx context.Context, tx *sql.Tx) *rtx {
	return &rtx{ctx: ctx, db: db, pool: db.reads, tx: tx}
}

// stmt returns the prepared statement for query (one of readQueries),
// bound to the transaction.
func (r *rtx) stmt(query string) *sql.Stmt {
	if s, ok := r.bound[query]; ok {
		return s
	}
	if r.bound == nil {
		r.bound = make(map[string]*sql.Stmt, len(readQueries))
	}
	s := r.tx.StmtContext(r.ctx, r.pool.stmts[query])
	r.bound[query] = s
	return s
}

// loadRow reads a document's row; ErrNotFound if missing.
func (r *rtx) loadRow(id string) (*docState, error) {
	st := &docState{id: id}
	var tree []byte
	err := r.stmt(rLoadRow).QueryRowContext(r.ctx, id).Scan(&st.docID, &st.seq, &tree)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
	}
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", id, err)
	}
	return st, st.setTree(tree)
}

// Get returns one revision of a document, with CouchDB's GET options: the
// winner by default, opts.Rev for a given revision (a tombstone too). A
// missing document or revision is ErrNotFound with reason "missing"; a
// document whose winner is deleted, asked without Rev, ErrNotFound with
// reason "deleted". _local/ ids are read with GetLocal.
func (db *DB) Get(ctx context.Context, id string, opts GetOptions) (*couchdoc.Doc, error) {
	if couchdoc.IsLocalID(id) {
		return db.GetLocal(ctx, id)
	}
	var doc *couchdoc.Doc
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		r := db.newRtx(ctx, tx)
		st, err := r.loadRow(id)
		if err != nil {
			return err
		}
		t := st.tree
		i := t.Winner()
		if opts.Rev == "" {
			if t.Nodes[i].Deleted {
				return couchdoc.Errorf(couchdoc.ErrNotFound, "deleted")
			}
		} else {
			rev, err := revtree.ParseRev(opts.Rev)
			if err != nil {
				return err
			}
			if i = t.Find(rev); i < 0 {
				return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
			}
			if opts.Latest {
				i = t.LeavesUnder(i)[0]
			}
		}
		doc, err = r.makeDoc(st, i, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// OpenRevs returns the listed revisions of a document (nil revs: every
// leaf, the winner first), as CouchDB's open_revs: a revision we do not
// have comes back as OpenRev{Missing: rev}. With opts.Latest each listed
// revision is replaced by the leaves descending from it. A document that
// does not exist is ErrNotFound when revs is nil, else every rev is missing.
// OpenRevsBatch answers many documents per read transaction.
func (db *DB) OpenRevs(ctx context.Context, id string, revs []string, opts GetOptions) ([]OpenRev, error) {
	parsed, err := parseRevs(revs)
	if err != nil {
		return nil, err
	}
	var out []OpenRev
	err = db.readTx(ctx, func(tx *sql.Tx) error {
		r := db.newRtx(ctx, tx)
		st, err := r.loadRow(id)
		if err != nil && !errors.Is(err, couchdoc.ErrNotFound) {
			return err
		}
		out, err = r.openRevs(id, st, revs, parsed, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func parseRevs(revs []string) ([]revtree.Rev, error) {
	parsed := make([]revtree.Rev, len(revs))
	for k, s := range revs {
		r, err := revtree.ParseRev(s)
		if err != nil {
			return nil, err
		}
		parsed[k] = r
	}
	return parsed, nil
}

// pick is one answer of OpenRevs before its body is read: a node of the
// document's tree, or (node < 0) a revision we do not have.
type pick struct {
	node    int
	missing string
}

// pickRevs chooses OpenRevs' answers for the document whose row is st (nil
// when the document is not stored); parsed holds revs parsed.
func pickRevs(st *docState, revs []string, parsed []revtree.Rev, opts GetOptions) ([]pick, error) {
	var out []pick
	if st == nil {
		if revs == nil {
			return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		for _, rev := range parsed {
			out = append(out, pick{node: -1, missing: rev.String()})
		}
		return out, nil
	}
	t := st.tree
	var seen map[int]bool // once out is long; a look through it before
	emit := func(i int) {
		if seen == nil && len(out) < 8 {
			for _, p := range out {
				if p.node == i {
					return
				}
			}
		} else {
			if seen == nil {
				seen = make(map[int]bool, 2*len(out))
				for _, p := range out {
					seen[p.node] = true
				}
			}
			if seen[i] {
				return
			}
			seen[i] = true
		}
		out = append(out, pick{node: i})
	}
	if revs == nil {
		for _, l := range t.Leaves() {
			emit(l)
		}
		return out, nil
	}
	for _, rev := range parsed {
		i := t.Find(rev)
		switch {
		case i < 0:
			out = append(out, pick{node: -1, missing: rev.String()})
		case !opts.Latest:
			emit(i)
		default:
			for _, l := range t.LeavesUnder(i) {
				emit(l)
			}
		}
	}
	return out, nil
}

// openRevs answers OpenRevs for document id, whose row is st (nil when the
// document is not stored); parsed holds revs parsed.
func (r *rtx) openRevs(id string, st *docState, revs []string, parsed []revtree.Rev, opts GetOptions) ([]OpenRev, error) {
	picks, err := pickRevs(st, revs, parsed, opts)
	if err != nil {
		return nil, err
	}
	out := make([]OpenRev, 0, len(picks))
	for _, p := range picks {
		if p.node < 0 {
			out = append(out, OpenRev{Missing: p.missing})
			continue
		}
		d, err := r.makeDoc(st, p.node, opts)
		if errors.Is(err, couchdoc.ErrNotFound) {
			out = append(out, OpenRev{Missing: st.tree.Nodes[p.node].Rev.String()})
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, OpenRev{Doc: d})
	}
	return out, nil
}

// makeDoc builds the document of node i; ErrNotFound if its body is not
// stored.
func (r *rtx) makeDoc(st *docState, i int, opts GetOptions) (*couchdoc.Doc, error) {
	t := st.tree
	n := t.Nodes[i]
	var body []byte
	var revRow int64
	var hasAtts bool
	if b, ok := r.bodies[bodyKey{st.docID, n.Rev.String()}]; ok {
		if b == nil {
			return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		body, revRow, hasAtts = b.body, b.revRow, b.hasAtts
	} else {
		err := r.stmt(rBody).QueryRowContext(r.ctx, st.docID, n.Rev.String()).
			Scan(&revRow, &body, &hasAtts)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", st.id, err)
		}
	}
	doc := &couchdoc.Doc{ID: st.id, Rev: n.Rev.String(), Deleted: n.Deleted, Body: body}
	if opts.Revs {
		doc.Revisions = t.History(i)
	}
	if opts.RevsInfo {
		have, err := storedRevs(r.ctx, r.tx, st.docID)
		if err != nil {
			return nil, err
		}
		for _, j := range t.Path(i) {
			rn := t.Nodes[j]
			status := "missing"
			if have[rn.Rev.String()] {
				status = "available"
				if rn.Deleted {
					status = "deleted"
				}
			}
			doc.RevsInfo = append(doc.RevsInfo, couchdoc.RevInfo{Rev: rn.Rev.String(), Status: status})
		}
	}
	leaves := t.Leaves()
	if leaves[0] == i && (opts.Conflicts || opts.DeletedConflicts) {
		for _, l := range leaves[1:] {
			ln := t.Nodes[l]
			switch {
			case !ln.Deleted && opts.Conflicts:
				doc.Conflicts = append(doc.Conflicts, ln.Rev.String())
			case ln.Deleted && opts.DeletedConflicts:
				doc.DeletedConflicts = append(doc.DeletedConflicts, ln.Rev.String())
			}
		}
	}
	if opts.LocalSeq {
		doc.LocalSeq = st.seq
	}
	if hasAtts {
		if err := r.fillAtts(doc, revRow, t, i, opts); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func storedRevs(ctx context.Context, q querier, docID int64) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, "SELECT rev FROM revs WHERE doc_id = ?", docID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := make(map[string]bool)
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		have[r] = true
	}
	return have, rows.Err()
}

// fillAtts adds the revision's attachments: stubs, or bodies when asked
// (only those newer than the newest AttsSince ancestor of node i of t; t
// may be nil when opts has no AttsSince).
func (r *rtx) fillAtts(doc *couchdoc.Doc, revRow int64, t *revtree.Tree, i int, opts GetOptions) error {
	rows, err := r.stmt(rRevAtts).QueryContext(r.ctx, revRow)
	if err != nil {
		return err
	}
	var atts []*storedAtt
	for rows.Next() {
		a := &storedAtt{}
		if err := rows.Scan(&a.Name, &a.Digest, &a.ContentType, &a.Length, &a.RevPos, &a.Encoding, &a.Missing); err != nil {
			rows.Close()
			return err
		}
		atts = append(atts, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	withData := opts.Attachments || len(opts.AttsSince) > 0
	sincePos := 0
	if len(opts.AttsSince) > 0 {
		since := make(map[string]bool, len(opts.AttsSince))
		for _, r := range opts.AttsSince {
			since[r] = true
		}
		for _, j := range t.Path(i) {
			if since[t.Nodes[j].Rev.String()] {
				sincePos = t.Nodes[j].Gen
				break
			}
		}
	}
	doc.Attachments = make(map[string]*couchdoc.Attachment, len(atts))
	for _, a := range atts {
		ca := a.stub()
		if withData && a.RevPos > sincePos && !a.Missing {
			ca.Stub = false
			if a.Length <= inlineMax {
				if ca.Data, err = attachstore.ReadAll(r.ctx, r.stmt(attachstore.QContent), a.Digest); err != nil {
					return err
				}
			} else {
				ca.Body = r.db.attReader(r.ctx, a.Digest, a.Length)
			}
		}
		doc.Attachments[a.Name] = ca
	}
	return nil
}

// OpenAttachment returns an attachment's metadata and a stream of its
// bytes (close it). rev "" reads the winner. A missing document, revision
// or attachment is ErrNotFound; an attachment whose bytes the store lacks
// (lazy replication, EvictAttachment) is ErrAttachmentNotDownloaded.
func (db *DB) OpenAttachment(ctx context.Context, id, rev, name string) (*couchdoc.Attachment, io.ReadCloser, error) {
	doc, err := db.Get(ctx, id, GetOptions{Rev: rev})
	if err != nil {
		return nil, nil, err
	}
	a := doc.Attachments[name]
	if a == nil {
		return nil, nil, couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment")
	}
	if a.NotDownloaded {
		return nil, nil, couchdoc.Errorf(couchdoc.ErrAttachmentNotDownloaded, "attachment %q of %q: body not downloaded", name, id)
	}
	a.Stub = false
	return a, db.attReader(ctx, a.Digest, a.Length), nil
}
