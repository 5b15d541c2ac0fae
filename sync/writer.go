package sync

import (
	"context"
	"errors"
	"net/http"

	"github.com/settee/settee/couchdoc"
)

// writeDocs is the writer: one _bulk_docs request per unit, retried after
// transient errors. Per-document refusals count as doc_write_failures and
// are not retried.
func (r *replication) writeDocs(ctx context.Context, s *session, in <-chan *writeUnit, ckpt chan<- struct{}) error {
	tgt := r.opts.Target
	pace := newPacer(r.opts.Throttle)
	for u := range in {
		if err := pace.wait(ctx, len(u.docs)); err != nil {
			return err
		}
		res, err := r.bulkDocs(ctx, u.docs)
		if err != nil {
			return peerErr("target", tgt, "bulk_docs", err)
		}
		var st Stats
		var refused map[string]error // by id and rev, for the docs event
		for _, dr := range res {
			if dr.Error == "" {
				continue
			}
			st.DocWriteFailures++
			err := peerErr("target", tgt, "write document", dr.Err())
			r.docFailure(DocFailure{ID: dr.ID, Rev: dr.Rev, Err: err})
			if refused == nil {
				refused = map[string]error{}
			}
			if dr.Rev != "" {
				refused[dr.ID+"\x00"+dr.Rev] = err
			} else {
				refused[dr.ID] = err // CouchDB's new_edits=false answer names no rev
			}
		}
		var evs []DocEvent
		if r.docEvents() {
			evs = make([]DocEvent, len(u.docs))
			for i, d := range u.docs {
				evs[i] = DocEvent{ID: d.ID, Rev: d.Rev, Deleted: d.Deleted, Err: refused[d.ID+"\x00"+d.Rev]}
				if evs[i].Err == nil {
					evs[i].Err = refused[d.ID]
				}
			}
		}
		st.DocsWritten = int64(len(u.docs)) - st.DocWriteFailures
		s.written.Store(true)
		ids := make([]string, len(u.docs))
		for i, d := range u.docs {
			ids[i] = d.ID
		}
		r.settle(u.b, ids, st)
		r.docsDone(evs) // after settle: its status counts them
		u.docs = nil
		if u.b.refs.Load() > 1 {
			// The batch is not done: report this unit's progress now
			// (its completion reports itself).
			r.emit(Event{Kind: EventProgress})
		}
		r.release(s, u.b, ckpt)
	}
	return nil
}

// bulkDocs writes docs with retries. A request the target refuses for
// what it holds (413 too large, or a 400 such as CouchDB's for a document
// its parser refuses, which fails the whole request) is split in halves
// until the document it refuses is alone: that one fails with the
// target's error (a doc_write_failure) and the others are written.
func (r *replication) bulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	var res []couchdoc.DocResult
	err := r.retry(ctx, func() (err error) { res, err = r.writeBulk(ctx, docs); return err })
	if err == nil || ctx.Err() != nil || !refusesDocs(err) {
		return res, err
	}
	if len(docs) == 1 {
		var ce *couchdoc.Error
		errors.As(err, &ce) // refusesDocs found one
		fr := couchdoc.FailedResult(docs[0].ID, ce)
		fr.Rev = docs[0].Rev
		return []couchdoc.DocResult{fr}, nil
	}
	half := len(docs) / 2
	a, err := r.bulkDocs(ctx, docs[:half])
	if err != nil {
		return nil, err
	}
	b, err := r.bulkDocs(ctx, docs[half:])
	return append(a, b...), err
}

// refusesDocs tells an error of a whole _bulk_docs request that comes from
// the documents it holds.
func refusesDocs(err error) bool {
	switch couchdoc.StatusOf(err) {
	case http.StatusRequestEntityTooLarge, http.StatusBadRequest:
		return true
	}
	return false
}
