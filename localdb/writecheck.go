package localdb

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/settee/settee/couchdoc"
)

// WriteCheck decides whether a document write may be made: a store runs
// it on every write once the app turns it on with SetWriteCheck. Package
// localdb/validate implements it with the store's validate_doc_update
// functions (validate.Validator.WriteCheck).
//
// CouchDB validates every write it receives, replicated ones included;
// PouchDB validates none locally. A store follows PouchDB unless the app
// turns the check on: then it refuses offline what its CouchDB would
// refuse, and a pull counts the revisions it refuses as
// doc_write_failures, as CouchDB's replicator does, and goes on.
type WriteCheck interface {
	// CheckWrite returns nil to let the write of doc through (newEdits
	// false: a replicated revision with its _revisions), else the error
	// the write fails with, a *couchdoc.Error such as
	// couchdoc.ErrForbidden or couchdoc.ErrUnauthorized. It reads db as it
	// was before the write, and must not write to it.
	CheckWrite(ctx context.Context, db *DB, doc *couchdoc.Doc, newEdits bool) error
}

// writeCheckHolder lets an interface live in an atomic.Pointer.
type writeCheckHolder struct{ c WriteCheck }

// checkSlot is the DB field holding the write check (nil: none).
type checkSlot = atomic.Pointer[writeCheckHolder]

// SetWriteCheck makes every later document write of this handle pass c
// first: Put, Delete, BulkDocs (new_edits true and false, so replicated
// writes), BulkDocsLazy, Batch's Put and Delete, and ResolveConflict's
// merge and deletions; attachments are written with their document, so
// they are checked with it. A refused document is not written and fails
// with c's error (in BulkDocs, in its result alone). _local documents
// and purges are not checked, as in CouchDB. nil turns the check off.
func (db *DB) SetWriteCheck(c WriteCheck) {
	if c == nil {
		db.writeCheck.Store(nil)
		return
	}
	db.writeCheck.Store(&writeCheckHolder{c})
}

// checkWrite runs the write check, if any, on a write of doc.
func (db *DB) checkWrite(ctx context.Context, doc *couchdoc.Doc, newEdits bool) error {
	h := db.writeCheck.Load()
	if h == nil || doc == nil || couchdoc.IsLocalID(doc.ID) {
		return nil
	}
	return h.c.CheckWrite(ctx, db, doc, newEdits)
}

// checkDocs runs the write check on each document of a bulk write, and
// returns the refused ones' errors by index (nil when the check is off or
// refuses none). An error that is not a document's refusal (I/O, a
// closed store) is returned alone.
func (db *DB) checkDocs(ctx context.Context, docs []*couchdoc.Doc, newEdits bool) (map[int]*couchdoc.Error, error) {
	if db.writeCheck.Load() == nil {
		return nil, nil
	}
	var refused map[int]*couchdoc.Error
	for i, doc := range docs {
		err := db.checkWrite(ctx, doc, newEdits)
		if err == nil {
			continue
		}
		var ce *couchdoc.Error
		if !errors.As(err, &ce) {
			return nil, err
		}
		if refused == nil {
			refused = map[int]*couchdoc.Error{}
		}
		refused[i] = ce
	}
	return refused, nil
}
