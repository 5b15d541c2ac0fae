package localdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// Put writes a local edit (new_edits=true) and returns the new revision.
// doc.Rev names the leaf it replaces ("" to create); anything else is
// ErrConflict. doc.Deleted writes a tombstone. A document whose leaves are
// all deleted is recreated by a live write without rev (its new revision
// extends the winning tombstone); naming a rev or writing a tombstone on it
// is ErrConflict, as in CouchDB 3.
// Attachments carry Data, a streamed Body, or are stubs of the parent
// revision's attachments (else ErrMissingStub). _local/ ids go to PutLocal.
func (db *DB) Put(ctx context.Context, doc *couchdoc.Doc) (string, error) {
	res, err := db.BulkDocs(ctx, []*couchdoc.Doc{doc}, true)
	if err != nil {
		return "", err
	}
	if err := res[0].Err(); err != nil {
		return "", err
	}
	return res[0].Rev, nil
}

// Delete writes a tombstone on leaf rev of document id and returns its
// revision. A missing document is ErrNotFound; a rev that is not a leaf,
// or a document already deleted, ErrConflict.
func (db *DB) Delete(ctx context.Context, id, rev string) (string, error) {
	if couchdoc.IsLocalID(id) {
		return "", db.DeleteLocal(ctx, id, rev)
	}
	if err := db.enter(); err != nil {
		return "", err
	}
	defer db.leave()
	doc := &couchdoc.Doc{ID: id, Rev: rev, Deleted: true}
	var newRev string
	err := db.writeDocs(ctx, attWriter{}, func(w *docWriter) error {
		states, err := w.preload([]*couchdoc.Doc{doc})
		if err != nil {
			return err
		}
		if st := states[id]; st == nil || st.docID == 0 {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		if err := db.checkWrite(ctx, doc, true); err != nil {
			return err
		}
		newRev, err = w.putEdit(states, doc)
		return err
	})
	return newRev, err
}

// BulkDocs writes documents in one transaction and returns one result per
// input document, in input order; one bad document does not fail the
// others. Streamed attachment bodies are read into the store first, outside
// that transaction (staged), so they never hold up other writers.
//
// With newEdits each document is a local edit as in Put. Without,
// each carries _rev and _revisions and its history is merged into the
// document's tree as replication does (CouchDB's new_edits=false); a
// revision the tree already has (even only by id) is ignored with its
// history, as CouchDB does, and reported OK. Unlike CouchDB, which
// only lists failures for new_edits=false, every document gets a result:
// OK with its rev on success. Replicated attachments: a stub names an
// attachment (same name, revpos not newer) of the nearest stored ancestor,
// else ErrMissingStub; bytes whose stated md5 digest differs from ours are
// accepted (CouchDB digests gzipped bytes) and stored under our digest, but
// a wrong length is ErrDigestMismatch. The returned error is for the batch as a
// whole (I/O, closed database); per-document errors are in the results.
func (db *DB) BulkDocs(ctx context.Context, docs []*couchdoc.Doc, newEdits bool) ([]couchdoc.DocResult, error) {
	return db.bulkDocs(ctx, docs, newEdits, false)
}

func (db *DB) bulkDocs(ctx context.Context, docs []*couchdoc.Doc, newEdits, lazy bool) ([]couchdoc.DocResult, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	refused, err := db.checkDocs(ctx, docs, newEdits)
	if err != nil || len(refused) == 0 {
		if err != nil {
			return nil, err
		}
		return db.writeBulk(ctx, docs, newEdits, lazy)
	}
	// The refused documents are left out of the write, so that the
	// others (revisions of one document among them) are written as if
	// they had come alone.
	pass := make([]*couchdoc.Doc, 0, len(docs)-len(refused))
	at := make([]int, 0, cap(pass))
	results := make([]couchdoc.DocResult, len(docs))
	for i, doc := range docs {
		if ce := refused[i]; ce != nil {
			results[i] = couchdoc.FailedResult(doc.ID, ce)
			continue
		}
		pass, at = append(pass, doc), append(at, i)
	}
	written, err := db.writeBulk(ctx, pass, newEdits, lazy)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		results[i] = written[j]
	}
	return results, nil
}

// writeBulk is bulkDocs once the write check has passed docs.
func (db *DB) writeBulk(ctx context.Context, docs []*couchdoc.Doc, newEdits, lazy bool) ([]couchdoc.DocResult, error) {
	results := make([]couchdoc.DocResult, len(docs))
	staged, err := db.stage(ctx, docs)
	if err != nil {
		return nil, err
	}
	defer db.unstage(ctx, staged)
	err = db.writeDocs(ctx, attWriter{staged: staged, lazy: lazy}, func(w *docWriter) error {
		states, err := w.preload(docs)
		if err != nil {
			return err
		}
		var repeats map[string]*repeatedDoc
		if !newEdits {
			repeats = findRepeats(docs, states)
		}
		for i, doc := range docs {
			if doc == nil {
				results[i] = couchdoc.DocResult{Error: "bad_request", Reason: "null document"}
				continue
			}
			var rev string
			var err error
			known := !newEdits && !couchdoc.IsLocalID(doc.ID) && knownRev(states[doc.ID], doc)
			switch {
			case couchdoc.IsLocalID(doc.ID):
				rev, err = w.putLocal(doc)
			case newEdits:
				rev, err = w.putEdit(states, doc)
			case repeats[doc.ID] != nil:
				rep := repeats[doc.ID]
				rev, err = w.mergeRepeated(states, doc, rep)
				if i == rep.last {
					if serr := w.saveRepeated(states[doc.ID], rep); serr != nil {
						return serr
					}
				}
			default:
				rev, err = w.putReplicated(states, doc)
			}
			results[i] = couchdoc.DocResult{ID: doc.ID, Rev: rev, OK: err == nil, Existing: known && err == nil}
			if err != nil {
				var ce *couchdoc.Error
				if !errors.As(err, &ce) {
					return err
				}
				results[i] = couchdoc.FailedResult(doc.ID, ce)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// preloadChunk is how many ids one preload query asks for.
const preloadChunk = 512

// preload reads the trees of all the batch's documents in few queries.
func (w *wtx) preload(docs []*couchdoc.Doc) (map[string]*docState, error) {
	states := make(map[string]*docState, len(docs))
	var ids []any
	for _, d := range docs {
		if d == nil || d.ID == "" || couchdoc.IsLocalID(d.ID) {
			continue
		}
		if _, ok := states[d.ID]; !ok {
			states[d.ID] = &docState{id: d.ID, tree: &revtree.Tree{}}
			ids = append(ids, d.ID)
		}
	}
	for len(ids) > 0 {
		n := min(preloadChunk, len(ids))
		// Pad to a prepared size by repeating the last id (IN ignores it).
		size := 1
		for size < n {
			size *= 2
		}
		args := ids[:n:n]
		for len(args) < size {
			args = append(args, ids[n-1])
		}
		s, err := w.Bind(preloadQuery(size))
		if err != nil {
			return nil, err
		}
		rows, err := s.QueryContext(w.ctx, args...)
		if err != nil {
			return nil, fmt.Errorf("load docs: %w", err)
		}
		for rows.Next() {
			var id string
			var docID int64
			var tree []byte
			if err := rows.Scan(&id, &docID, &tree); err != nil {
				rows.Close()
				return nil, err
			}
			st := states[id]
			st.docID = docID
			if err := st.setTree(tree); err != nil {
				rows.Close()
				return nil, err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return states, nil
}

func hasBytes(atts map[string]*couchdoc.Attachment) bool {
	for _, a := range atts {
		if !a.Stub {
			return true
		}
	}
	return false
}

// putEdit applies one new_edits=true write.
func (w *docWriter) putEdit(states map[string]*docState, doc *couchdoc.Doc) (string, error) {
	if err := couchdoc.ValidateDocID(doc.ID); err != nil {
		return "", err
	}
	body, err := doc.ValidBody()
	if err != nil {
		return "", err
	}
	canon, err := couchdoc.CanonicalBody(body)
	if err != nil {
		return "", err
	}
	st := states[doc.ID]
	t := st.tree
	parent := -1
	if win := t.Winner(); win >= 0 && t.Nodes[win].Deleted {
		// Every leaf is deleted. As CouchDB 3 (couch_db_updater
		// merge_rev_tree, apache/couchdb#3177): only a live write without a
		// rev is accepted; it recreates the document by extending the
		// winning tombstone. Naming a rev, or writing a tombstone, conflicts.
		if doc.Rev != "" || doc.Deleted {
			if _, err := revtree.ParseRev(doc.Rev); doc.Rev != "" && err != nil {
				return "", err
			}
			return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
		}
		parent = win
	} else if doc.Rev == "" {
		if win >= 0 {
			return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
		}
	} else {
		r, err := revtree.ParseRev(doc.Rev)
		if err != nil {
			return "", err
		}
		i := t.Find(r)
		if i < 0 || !t.IsLeaf(i) {
			return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
		}
		parent = i
	}
	gen, parentRev := 1, ""
	if parent >= 0 {
		gen = t.Nodes[parent].Gen + 1
		parentRev = t.Nodes[parent].Rev.String()
	}
	if gen > revtree.MaxGen {
		return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "revision generation limit reached")
	}
	return w.withSavepoint(hasBytes(doc.Attachments), func() (string, error) {
		var cands []map[string]*storedAtt
		if parent >= 0 && len(doc.Attachments) > 0 {
			all, err := w.revAtts(st.docID)
			if err != nil {
				return "", err
			}
			cands = append(cands, all[parentRev])
		}
		atts, err := w.atts.resolve(doc.ID, doc.Attachments, cands, gen, false)
		if err != nil {
			return "", err
		}
		hashAtts := make(map[string]*couchdoc.Attachment, len(atts))
		for _, a := range atts {
			hashAtts[a.Name] = &couchdoc.Attachment{Digest: a.Digest}
		}
		r := revtree.Rev{Gen: gen, Hash: couchdoc.NewRevHash(doc.Deleted, parentRev, canon, hashAtts)}
		if t.Find(r) >= 0 {
			return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
		}
		t.AddLeaf(parent, r, doc.Deleted)
		if _, err := w.saveDoc(st, []revWrite{{rev: r.String(), body: body, atts: atts}}); err != nil {
			return "", err
		}
		return r.String(), nil
	})
}

// replicatedRev checks one new_edits=false document and returns its rev,
// the path _revisions gives it and its body.
func replicatedRev(doc *couchdoc.Doc) (rev string, path []revtree.Rev, body []byte, err error) {
	if err := couchdoc.ValidateDocID(doc.ID); err != nil {
		return "", nil, nil, err
	}
	rev = doc.Rev
	if rev == "" && doc.Revisions != nil && len(doc.Revisions.IDs) > 0 {
		// CouchDB takes the revision from _revisions when _rev is absent.
		rev = couchdoc.FormatRev(doc.Revisions.Start, doc.Revisions.IDs[0])
	}
	if rev == "" {
		return "", nil, nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "new_edits=false needs a _rev")
	}
	if path, err = revtree.PathFromRevisions(rev, doc.Revisions); err != nil {
		return "", nil, nil, err
	}
	if rev, err = couchdoc.CanonRev(rev); err != nil { // as CouchDB keeps it; no copy when it is
		return "", nil, nil, err
	}
	if body, err = doc.ValidBody(); err != nil {
		return "", nil, nil, err
	}
	return rev, path, body, nil
}

// knownRev reports whether st's tree has the revision of doc (given with
// new_edits=false) already, so that storing it writes nothing.
func knownRev(st *docState, doc *couchdoc.Doc) bool {
	if st == nil {
		return false
	}
	rev := doc.Rev
	if rev == "" && doc.Revisions != nil && len(doc.Revisions.IDs) > 0 {
		rev = couchdoc.FormatRev(doc.Revisions.Start, doc.Revisions.IDs[0])
	}
	path, err := revtree.PathFromRevisions(rev, doc.Revisions)
	return err == nil && len(path) > 0 && st.tree.Find(path[0]) >= 0
}

// putReplicated merges one new_edits=false document.
func (w *docWriter) putReplicated(states map[string]*docState, doc *couchdoc.Doc) (string, error) {
	rev, path, body, err := replicatedRev(doc)
	if err != nil {
		return "", err
	}
	st := states[doc.ID]
	if st.tree.Find(path[0]) >= 0 {
		// A revision the tree has (leaf, or ancestor even if known only by
		// id) is ignored with whatever history comes with it, and counts as
		// a success: CouchDB's prep_and_validate_replicated_updates keeps
		// only documents whose rev becomes a new leaf.
		return rev, nil
	}
	return w.withSavepoint(hasBytes(doc.Attachments), func() (string, error) {
		t := st.tree.Clone()
		leaf, _ := t.Merge(path, doc.Deleted)
		var cands []map[string]*storedAtt
		if st.docID != 0 && len(doc.Attachments) > 0 {
			all, err := w.revAtts(st.docID)
			if err != nil {
				return "", err
			}
			for _, i := range t.Path(leaf)[1:] {
				if c := all[t.Nodes[i].Rev.String()]; c != nil {
					cands = append(cands, c)
				}
			}
			for r, c := range all { // then any other revision (lenient, by digest)
				if i := t.Find(mustRev(r)); i < 0 || !t.IsAncestor(i, leaf) {
					cands = append(cands, c)
				}
			}
		}
		atts, err := w.atts.resolve(doc.ID, doc.Attachments, cands, path[0].Gen, true)
		if err != nil {
			return "", err
		}
		old := st.tree
		st.tree = t
		if _, err := w.saveDoc(st, []revWrite{{rev: rev, body: body, atts: atts}}); err != nil {
			st.tree = old
			return "", err
		}
		return rev, nil
	})
}
