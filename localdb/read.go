package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// rs returns the read pool's prepared statement for query, bound to tx.
func (db *DB) rs(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	return tx.StmtContext(ctx, db.rstmts[query])
}

// loadRow reads a document's row; ErrNotFound if missing.
func (db *DB) loadRow(ctx context.Context, tx *sql.Tx, id string) (*docState, error) {
	st := &docState{id: id}
	var tree []byte
	err := db.rs(ctx, tx, rLoadRow).QueryRowContext(ctx, id).Scan(&st.docID, &st.seq, &tree)
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
		st, err := db.loadRow(ctx, tx, id)
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
			r, err := revtree.ParseRev(opts.Rev)
			if err != nil {
				return err
			}
			if i = t.Find(r); i < 0 {
				return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
			}
			if opts.Latest {
				i = t.LeavesUnder(i)[0]
			}
		}
		doc, err = db.makeDoc(ctx, tx, st, i, opts)
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
func (db *DB) OpenRevs(ctx context.Context, id string, revs []string, opts GetOptions) ([]OpenRev, error) {
	parsed := make([]revtree.Rev, len(revs))
	for k, s := range revs {
		r, err := revtree.ParseRev(s)
		if err != nil {
			return nil, err
		}
		parsed[k] = r
	}
	var out []OpenRev
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		st, err := db.loadRow(ctx, tx, id)
		if errors.Is(err, couchdoc.ErrNotFound) && revs != nil {
			for _, r := range revs {
				out = append(out, OpenRev{Missing: r})
			}
			return nil
		}
		if err != nil {
			return err
		}
		t := st.tree
		seen := make(map[int]bool)
		emit := func(i int) error {
			if seen[i] {
				return nil
			}
			seen[i] = true
			d, err := db.makeDoc(ctx, tx, st, i, opts)
			if errors.Is(err, couchdoc.ErrNotFound) {
				out = append(out, OpenRev{Missing: t.Nodes[i].Rev.String()})
				return nil
			}
			if err != nil {
				return err
			}
			out = append(out, OpenRev{Doc: d})
			return nil
		}
		if revs == nil {
			for _, l := range t.Leaves() {
				if err := emit(l); err != nil {
					return err
				}
			}
			return nil
		}
		for k, r := range parsed {
			i := t.Find(r)
			if i < 0 {
				out = append(out, OpenRev{Missing: revs[k]})
				continue
			}
			if !opts.Latest {
				if err := emit(i); err != nil {
					return err
				}
				continue
			}
			for _, l := range t.LeavesUnder(i) {
				if err := emit(l); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// makeDoc builds the document of node i; ErrNotFound if its body is not
// stored.
func (db *DB) makeDoc(ctx context.Context, tx *sql.Tx, st *docState, i int, opts GetOptions) (*couchdoc.Doc, error) {
	t := st.tree
	n := t.Nodes[i]
	var body []byte
	var revRow int64
	var hasAtts bool
	err := db.rs(ctx, tx, rBody).QueryRowContext(ctx, st.docID, n.Rev.String()).
		Scan(&revRow, &body, &hasAtts)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
	}
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", st.id, err)
	}
	doc := &couchdoc.Doc{ID: st.id, Rev: n.Rev.String(), Deleted: n.Deleted, Body: body}
	if opts.Revs {
		doc.Revisions = t.History(i)
	}
	if opts.RevsInfo {
		have, err := storedRevs(ctx, tx, st.docID)
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
		if err := db.fillAtts(ctx, tx, doc, revRow, t, i, opts); err != nil {
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
func (db *DB) fillAtts(ctx context.Context, tx *sql.Tx, doc *couchdoc.Doc, revRow int64, t *revtree.Tree, i int, opts GetOptions) error {
	rows, err := db.rs(ctx, tx, rRevAtts).QueryContext(ctx, revRow)
	if err != nil {
		return err
	}
	var atts []*storedAtt
	for rows.Next() {
		a := &storedAtt{}
		if err := rows.Scan(&a.Name, &a.Digest, &a.ContentType, &a.Length, &a.RevPos); err != nil {
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
		if withData && a.RevPos > sincePos {
			ca.Stub = false
			if a.Length <= inlineMax {
				if ca.Data, err = db.readAllContent(ctx, tx, a.Digest); err != nil {
					return err
				}
			} else {
				ca.Body = &attReader{ctx: ctx, db: db, digest: a.Digest, length: a.Length}
			}
		}
		doc.Attachments[a.Name] = ca
	}
	return nil
}

// OpenAttachment returns an attachment's metadata and a stream of its
// bytes (close it). rev "" reads the winner. A missing document, revision
// or attachment is ErrNotFound.
func (db *DB) OpenAttachment(ctx context.Context, id, rev, name string) (*couchdoc.Attachment, io.ReadCloser, error) {
	doc, err := db.Get(ctx, id, GetOptions{Rev: rev})
	if err != nil {
		return nil, nil, err
	}
	a := doc.Attachments[name]
	if a == nil {
		return nil, nil, couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment")
	}
	a.Stub = false
	return a, &attReader{ctx: ctx, db: db, digest: a.Digest, length: a.Length}, nil
}
