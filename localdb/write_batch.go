package localdb

import (
	"context"
	"errors"
	gosync "sync"

	"github.com/settee/settee/couchdoc"
)

// Batch is one write transaction that a function fills with puts and
// deletes (DB.Batch). Its methods answer at once, as Put and Delete do,
// and later writes of the batch see earlier ones; nothing is visible to
// readers until the batch commits. Safe for concurrent use.
type Batch struct {
	ctx    context.Context // the DB.Batch call's, for the write check
	db     *DB
	mu     gosync.Mutex
	w      *docWriter // nil once the batch is over
	states map[string]*docState
	// err dooms the batch: an error other than a document's refusal
	// (I/O, a closed database) leaves the transaction in no state to
	// commit.
	err error
}

// Batch runs fn in one write transaction: every Put and Delete fn makes
// through b commits together when fn returns nil, and none does when fn
// returns an error or panics (the panic goes on after the rollback). A
// document refused by a Put or Delete (a conflict, a bad body) is that
// call's error only: fn decides whether the batch goes on. Streamed
// attachment bodies are refused in a batch (use Data, or Put). fn must
// not call db's other write methods: they wait for the batch to end, and
// the batch waits for fn.
func (db *DB) Batch(ctx context.Context, fn func(b *Batch) error) error {
	if fn == nil {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "nil batch function")
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	b := &Batch{ctx: ctx, db: db, states: map[string]*docState{}}
	defer b.end()
	return db.writeDocs(ctx, attWriter{}, func(w *docWriter) error {
		b.mu.Lock()
		b.w = w
		b.mu.Unlock()
		if err := fn(b); err != nil {
			return err
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		b.w = nil // writes from goroutines fn left behind are refused
		return b.err
	})
}

// end makes later calls on b fail.
func (b *Batch) end() {
	b.mu.Lock()
	b.w = nil
	b.mu.Unlock()
}

// Put writes a local edit in the batch, as DB.Put, and returns the new
// revision.
func (b *Batch) Put(doc *couchdoc.Doc) (string, error) {
	if doc == nil {
		return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "null document")
	}
	for _, a := range doc.Attachments {
		if a != nil && !a.Stub && a.Body != nil {
			return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "attachment %q: streamed bodies cannot be written in a batch", a.Name)
		}
	}
	return b.write(doc, false)
}

// Delete writes a tombstone on leaf rev of document id in the batch, as
// DB.Delete, and returns its revision.
func (b *Batch) Delete(id, rev string) (string, error) {
	return b.write(&couchdoc.Doc{ID: id, Rev: rev, Deleted: true}, true)
}

// write applies doc; del makes a missing document not_found (a delete)
// rather than a tombstone's creation.
func (b *Batch) write(doc *couchdoc.Doc, del bool) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return "", errBatchOver
	}
	if b.err != nil {
		return "", b.err
	}
	rev, err := b.apply(doc, del)
	var ce *couchdoc.Error
	if err != nil && !errors.As(err, &ce) {
		b.err = err
	}
	return rev, err
}

func (b *Batch) apply(doc *couchdoc.Doc, del bool) (string, error) {
	w := b.w
	if couchdoc.IsLocalID(doc.ID) {
		return w.putLocal(doc)
	}
	if _, ok := b.states[doc.ID]; !ok && doc.ID != "" {
		loaded, err := w.preload([]*couchdoc.Doc{doc})
		if err != nil {
			return "", err
		}
		for id, st := range loaded {
			b.states[id] = st
		}
	}
	if del {
		if st := b.states[doc.ID]; st == nil || st.docID == 0 {
			return "", couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
	}
	// The check reads the store as committed: not the batch's own
	// earlier writes.
	if err := b.db.checkWrite(b.ctx, doc, true); err != nil {
		return "", err
	}
	return w.putEdit(b.states, doc)
}
