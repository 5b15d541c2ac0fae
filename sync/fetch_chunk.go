package sync

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// fetchChunk is one attempt at fetching a chunk. Revisions are marked in
// handed when queued in the unit or written with PutDoc; those handed by
// an earlier attempt are skipped.
func (r *replication) fetchChunk(ctx context.Context, s *session, b *batch, chunk []missingDoc, handed map[string]bool, u *unitFiller) error {
	c := &chunkFetch{
		r: r, s: s, b: b, u: u, chunk: chunk, handed: handed,
		since:     make(map[string]int, len(chunk)),
		ancestors: make(map[string][]string, len(chunk)),
		refetched: map[string]bool{},
	}
	if iw, ok := r.opts.Target.(InlineWriter); ok {
		c.inlineMax = iw.InlineAttachmentMax()
	}
	for _, m := range chunk {
		c.since[m.id] = maxGen(m.ancestors)
		c.ancestors[m.id] = m.ancestors
	}
	return c.request(ctx)
}

// chunkFetch is one attempt at fetching a chunk of missing revisions.
type chunkFetch struct {
	r      *replication
	s      *session
	b      *batch
	u      *unitFiller
	chunk  []missingDoc
	handed map[string]bool
	// inlineMax is the target's InlineAttachmentMax (0: not an
	// InlineWriter).
	inlineMax int64
	// since is the target's newest generation per document, ancestors
	// the revisions it has (revs_diff's possible_ancestors).
	since     map[string]int
	ancestors map[string][]string
	refetched map[string]bool // revisions read again after FetchMissing
	// seen counts the revisions read; currentID is the document whose
	// open_revs is being read.
	seen      int
	currentID string
}

// request reads the chunk's revisions: as stubs for a lazy pull from a
// StubReader, else with _bulk_get, else (a source without it) with
// open_revs per document.
func (c *chunkFetch) request(ctx context.Context) error {
	src := c.r.opts.Source
	fn := c.receive(ctx)
	if sr, ok := src.(StubReader); ok && c.r.opts.Attachments.lazy {
		reqs := make([]BulkGetRequest, 0, len(c.chunk))
		for _, m := range c.chunk {
			for _, rev := range m.revs {
				reqs = append(reqs, BulkGetRequest{ID: m.id, Rev: rev})
			}
		}
		return peerErr("source", src, "read stubs", sr.ReadStubs(ctx, reqs, fn))
	}
	bg, ok := src.(BulkGetter)
	if ok && !c.r.noBulkGet.Load() {
		reqs := make([]BulkGetRequest, 0, len(c.chunk))
		for _, m := range c.chunk {
			for _, rev := range m.revs {
				reqs = append(reqs, BulkGetRequest{ID: m.id, Rev: rev, AttsSince: m.ancestors})
			}
		}
		err := bg.BulkGet(ctx, reqs, fn)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrNoBulkGet) && c.seen == 0:
			c.r.noBulkGet.Store(true)
		default:
			return peerErr("source", src, "bulk_get", err)
		}
	}
	for _, m := range c.chunk {
		c.currentID = m.id
		if err := src.OpenRevs(ctx, m.id, m.revs, m.ancestors, fn); err != nil {
			return peerErr("source", src, "open_revs", err)
		}
	}
	return nil
}

// receive is the callback of the source's reads.
func (c *chunkFetch) receive(ctx context.Context) func(doc *couchdoc.Doc, revErr error) error {
	return func(doc *couchdoc.Doc, revErr error) error {
		if revErr != nil {
			return c.unreadable(revErr)
		}
		if doc == nil {
			return nil
		}
		return c.take(ctx, doc)
	}
}

// unreadable handles a revision the source could not give: a transient
// error fails the attempt; another fails the document, counted and
// reported.
func (c *chunkFetch) unreadable(revErr error) error {
	r := c.r
	if isTransient(revErr) {
		return revErr
	}
	f := DocFailure{ID: c.currentID, Err: peerErr("source", r.opts.Source, "read document", revErr)}
	var st Stats
	var re *wire.RevError
	if errors.As(revErr, &re) {
		f.ID, f.Rev = cmp.Or(re.ID, f.ID), re.Rev
		if re.Refused {
			// Sent, but not a document this side can take: it
			// fails alone, as a write the target refused would.
			st = Stats{DocsRead: 1, DocWriteFailures: 1}
		}
	}
	if f.ID != "" {
		r.settle(c.b, []string{f.ID}, st)
	} else if st.DocWriteFailures > 0 {
		r.addStats(st)
	}
	r.docFailure(f)
	if f.ID != "" {
		r.docsDone([]DocEvent{{ID: f.ID, Rev: f.Rev, Err: f.Err}})
	}
	return nil
}

// take brings the attachment bodies of a revision read (the ones the
// target lacks, inline ones an InlineWriter reads, the small ones of a
// LazyOver pull) and writes it.
func (c *chunkFetch) take(ctx context.Context, doc *couchdoc.Doc) error {
	r, src := c.r, c.r.opts.Source
	key := doc.ID + "\x00" + doc.Rev
	if c.handed[key] {
		return nil
	}
	c.seen++
	if !r.opts.Attachments.lazy {
		if err := lacking(doc, c.since[doc.ID]); err != nil {
			return c.refetch(ctx, doc, key, err)
		}
	}
	if c.inlineMax > 0 && hasBody(doc) {
		if err := readInline(doc, c.inlineMax); err != nil {
			return c.failed(ctx, doc, key, "source", src, "read attachment", err)
		}
	}
	if r.opts.Attachments.over > 0 {
		closers, err := r.smallBodies(ctx, doc)
		defer func() {
			for _, cl := range closers {
				cl.Close()
			}
		}()
		if err != nil {
			return c.failed(ctx, doc, key, "source", src, "read attachment", err)
		}
		if c.inlineMax > 0 && hasBody(doc) {
			if err := readInline(doc, c.inlineMax); err != nil {
				return c.failed(ctx, doc, key, "source", src, "read attachment", err)
			}
		}
	}
	return c.write(ctx, doc, key)
}

// refetch handles a revision read without attachment bodies the target
// lacks (err, from lacking): with Options.FetchMissing it has the source
// fetch them and reads the revision again, once; without, or when that
// fails, the document fails.
func (c *chunkFetch) refetch(ctx context.Context, doc *couchdoc.Doc, key string, err error) error {
	r, src := c.r, c.r.opts.Source
	if r.opts.FetchMissing != nil && !c.refetched[key] {
		c.refetched[key] = true
		ferr := r.fetchMissing(ctx, doc, c.since[doc.ID])
		if ferr == nil {
			// Read it again, bodies and all, and take it from there.
			if err := src.OpenRevs(ctx, doc.ID, []string{doc.Rev}, c.ancestors[doc.ID], c.receive(ctx)); err != nil {
				return peerErr("source", src, "open_revs", err)
			}
			return nil
		}
		if ctx.Err() != nil || isTransient(ferr) {
			return ferr
		}
		err = fmt.Errorf("%w (fetching it: %v)", err, ferr)
	}
	return c.failed(ctx, doc, key, "source", src, "read attachment", err)
}

// write writes a revision alone with PutDoc (writeAlone) or queues it in
// the unit.
func (c *chunkFetch) write(ctx context.Context, doc *couchdoc.Doc, key string) error {
	r := c.r
	if writeAlone(doc, c.inlineMax) {
		if err := r.putDoc(ctx, doc); err != nil {
			return c.failed(ctx, doc, key, "target", r.opts.Target, "write document", err)
		}
		c.handed[key] = true
		r.settle(c.b, []string{doc.ID}, Stats{DocsRead: 1, DocsWritten: 1})
		c.s.written.Store(true)
		r.docsDone([]DocEvent{{ID: doc.ID, Rev: doc.Rev, Deleted: doc.Deleted}})
		return nil
	}
	c.handed[key] = true
	return c.u.add(ctx, doc)
}

// failed ends a revision that could not be read or written: a transient
// error (or ctx done) fails the attempt, another is the document's own,
// counted and reported.
func (c *chunkFetch) failed(ctx context.Context, doc *couchdoc.Doc, key, role string, p Peer, op string, err error) error {
	r := c.r
	if ctx.Err() != nil || isTransient(err) {
		return peerErr(role, p, op, err)
	}
	c.handed[key] = true
	r.settle(c.b, []string{doc.ID}, Stats{DocsRead: 1, DocWriteFailures: 1})
	f := DocFailure{ID: doc.ID, Rev: doc.Rev, Err: peerErr(role, p, op, err)}
	r.docFailure(f)
	r.docsDone([]DocEvent{{ID: doc.ID, Rev: doc.Rev, Deleted: doc.Deleted, Err: f.Err}})
	return nil
}
