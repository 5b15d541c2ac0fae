package sync

import (
	"context"
	"errors"
	"io"
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
		var existing int64           // revisions the target had already: not written by this one
		var refused map[string]error // by id and rev, for the docs event
		for _, dr := range res {
			if dr.Existing {
				existing++
			}
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
		st.DocsWritten = int64(len(u.docs)) - st.DocWriteFailures - existing
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

// writeBulk writes a _bulk_docs unit, lazily when the pull is lazy.
func (r *replication) writeBulk(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	if lw, ok := r.opts.Target.(LazyWriter); ok && r.opts.Attachments.lazy {
		res, err := lw.BulkDocsLazy(ctx, docs)
		if err != nil {
			return nil, err
		}
		var told []couchdoc.DocResult
		for _, d := range res {
			if d.Error != "" || d.Existing {
				told = append(told, d)
			}
		}
		return told, nil
	}
	return r.opts.Target.BulkDocs(ctx, docs)
}

// putDoc writes one document with streamed bodies, lazily when the pull
// is lazy.
func (r *replication) putDoc(ctx context.Context, doc *couchdoc.Doc) error {
	if _, ok := r.opts.Target.(LazyWriter); ok && r.opts.Attachments.lazy {
		res, err := r.writeBulk(ctx, []*couchdoc.Doc{doc})
		if err != nil {
			return err
		}
		for _, d := range res {
			if e := d.Err(); e != nil {
				return e
			}
		}
		return nil
	}
	return r.opts.Target.PutDoc(ctx, doc)
}

// smallBodies turns the stubs of doc's attachments of at most
// Attachments.over bytes into bodies streamed from the source (LazyOver),
// checked against their digests; the caller closes them after the write.
// Small bodies the target already holds are downloaded again (the source
// sends every attachment as a stub): the target keeps one copy.
func (r *replication) smallBodies(ctx context.Context, doc *couchdoc.Doc) ([]io.Closer, error) {
	g := r.opts.Source.(AttachmentGetter)
	var closers []io.Closer
	for name, a := range doc.Attachments {
		if !a.Stub || a.Length > r.opts.Attachments.over {
			continue
		}
		a.Name = name
		rc := AttachmentReader(ctx, g, doc.ID, doc.Rev, a, r.opts.Retries)
		closers = append(closers, rc)
		a.Stub, a.Body = false, rc
	}
	return closers, nil
}

// lacking refuses a document read from a source that lacks some of its
// attachment bodies (NotDownloaded stubs) unless the target has each of
// them: its stub is sent only when the target holds a revision of
// generation sinceGen >= the attachment's revpos (revs_diff's
// possible_ancestors, as CouchDB's atts_since). Otherwise the document
// fails alone with couchdoc.ErrAttachmentNotDownloaded: a stub the
// target cannot resolve is refused by CouchDB, and a peer that stores it
// anyway would keep a reference to bytes it never gets.
func lacking(doc *couchdoc.Doc, sinceGen int) error {
	for name, a := range doc.Attachments {
		if a.NotDownloaded && a.RevPos > sinceGen {
			return couchdoc.Errorf(couchdoc.ErrAttachmentNotDownloaded,
				"attachment %q of %s %s is not downloaded here and the target lacks it (fetch it first)", name, doc.ID, doc.Rev)
		}
	}
	return nil
}

// maxGen is the highest generation among revs (0 for none).
func maxGen(revs []string) int {
	g := 0
	for _, r := range revs {
		if n, _, err := couchdoc.ParseRev(r); err == nil {
			g = max(g, n)
		}
	}
	return g
}

// fetchMissing asks Options.FetchMissing for each body doc lacks that the
// target has not.
func (r *replication) fetchMissing(ctx context.Context, doc *couchdoc.Doc, sinceGen int) error {
	for name, a := range doc.Attachments {
		if a.NotDownloaded && a.RevPos > sinceGen {
			if err := r.opts.FetchMissing(ctx, doc.ID, name); err != nil {
				return err
			}
		}
	}
	return nil
}
