package mobile

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// SaveAll writes documents in one transaction, as CouchDB's _bulk_docs:
// docsJSON is a JSON array of documents (or CouchDB's {"docs":[...]}),
// each a Put's document; one without "_id" gets a new UUID, as CouchDB
// gives it. The answer is _bulk_docs': one result per document, in
// order, [{"ok":true,"id":"...","rev":"..."}, {"id":"...","error":
// "conflict","reason":"Document update conflict."}]: a refused document
// does not stop the others. A malformed document refuses the whole call
// and writes nothing.
func (d *Database) SaveAll(docsJSON string) (resultsJSON string, err error) {
	defer recoverTo(&err)
	docs, err := parseDocs(docsJSON)
	if err != nil {
		return "", err
	}
	if b := d.batchOfCaller(); b != nil {
		// Inside InBatch, on its thread: the documents join the batch.
		res := make([]couchdoc.DocResult, len(docs))
		for i, doc := range docs {
			rev, err := b.Put(doc)
			res[i] = docResult(doc.ID, rev, err)
			if err != nil && res[i].Error == "" {
				return "", err
			}
		}
		return marshal(res)
	}
	if err := d.checkWrite(); err != nil {
		return "", err
	}
	res, err := d.db.BulkDocs(d.ctx, docs, true)
	if err != nil {
		return "", err
	}
	return marshal(res)
}

// parseDocs reads SaveAll's argument.
func parseDocs(docsJSON string) ([]*couchdoc.Doc, error) {
	var raws []json.RawMessage
	trimmed := bytes.TrimSpace([]byte(docsJSON))
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var body struct {
			Docs []json.RawMessage `json:"docs"`
		}
		if err := json.Unmarshal(trimmed, &body); err != nil || body.Docs == nil {
			return nil, badRequest("SaveAll takes a JSON array of documents or {\"docs\":[...]}")
		}
		raws = body.Docs
	} else if err := json.Unmarshal(trimmed, &raws); err != nil || raws == nil {
		return nil, badRequest("SaveAll takes a JSON array of documents or {\"docs\":[...]}")
	}
	docs := make([]*couchdoc.Doc, len(raws))
	for i, raw := range raws {
		doc, err := couchdoc.ParseDoc(raw)
		if err != nil {
			return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "document %d: %v", i, err)
		}
		if doc.ID == "" {
			doc.ID = newUUID()
		}
		docs[i] = doc
	}
	return docs, nil
}

// docResult is one _bulk_docs result of a single write.
func docResult(id, rev string, err error) couchdoc.DocResult {
	if err == nil {
		return couchdoc.DocResult{ID: id, Rev: rev, OK: true}
	}
	if ce, ok := err.(*couchdoc.Error); ok {
		return couchdoc.FailedResult(id, ce)
	}
	return couchdoc.DocResult{ID: id}
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// BatchFunc is implemented by the app to make writes in one transaction
// (Database.InBatch). Run makes them through b; an error it returns (a
// thrown exception in Kotlin or Swift) rolls them all back.
type BatchFunc interface {
	Run(b *Batch) error
}

// Batch is the handle InBatch passes to BatchFunc.Run. It is valid during
// Run only; later calls fail with CodeClosed.
type Batch struct {
	b *localdb.Batch
}

// Put writes a document, as Database.Put, in the batch: a later write of
// the batch sees it; readers see it once the batch commits.
func (b *Batch) Put(docJSON string) (rev string, err error) {
	defer recoverTo(&err)
	doc, err := couchdoc.ParseDoc([]byte(docJSON))
	if err != nil {
		return "", err
	}
	if doc.ID == "" {
		return "", badRequest("the document has no _id")
	}
	return b.b.Put(doc)
}

// Delete deletes a document, as Database.Delete, in the batch.
func (b *Batch) Delete(docID, rev string) (newRev string, err error) {
	defer recoverTo(&err)
	return b.b.Delete(docID, rev)
}

// InBatch runs fn.Run in one write transaction: the writes it makes
// through its Batch commit together when it returns normally, and none
// does when it fails (an exception thrown in Kotlin/Java or Swift, which
// InBatch throws again as it was) or panics. A document Run's Put or
// Delete refuses (a conflict) is that call's error only: Run decides
// whether to go on. Database.Put, Delete and SaveAll called by Run, on
// its thread, join the batch; the Database's other writes there fail with
// bad_request, and writes from other threads wait for the batch. Keep Run
// short: it holds the store's write lock.
func (d *Database) InBatch(fn BatchFunc) (err error) {
	var appErr error // the app's own error goes back to it untouched
	defer func() {
		if appErr != nil {
			err = appErr
		}
	}()
	defer recoverTo(&err)
	if fn == nil {
		return badRequest("nil batch function")
	}
	if err := d.checkWrite(); err != nil {
		return err
	}
	g := goid()
	return d.db.Batch(d.ctx, func(lb *localdb.Batch) error {
		d.enterBatch(g, lb)
		defer d.leaveBatch()
		if err := callBatch(fn, &Batch{b: lb}); err != nil {
			if _, ours := err.(*codedError); !ours {
				appErr = err
			}
			return err
		}
		return nil
	})
}

// callBatch calls the app's BatchFunc; its panic becomes an error, which
// rolls the batch back.
func callBatch(fn BatchFunc, b *Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			logf(LevelError, "panic recovered in BatchFunc.Run: %v\n%s", r, debug.Stack())
			err = &codedError{code: CodeInternal, err: fmt.Errorf("panic in the batch function: %v", r)}
		}
	}()
	return fn.Run(b)
}
