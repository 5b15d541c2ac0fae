package sync

import (
	"bytes"
	"context"
	"io"

	"github.com/settee/settee/couchdoc"
)

// fetchBatch fetches the missing revisions of a batch from the source, in
// chunks of BulkGetSize revisions, each chunk retried as a whole after a
// transient error (writes are idempotent with new_edits=false). Documents
// that writeAlone picks (attachment bodies still streamed) are written at
// once with PutDoc, inside the fetch callback, so their bytes are never
// buffered; the others go to the writer in _bulk_docs units bounded in
// documents and bytes.
func (r *replication) fetchBatch(ctx context.Context, s *session, b *batch, writes chan<- *writeUnit) error {
	// One unit fills across the chunks of the batch: fewer, fuller
	// _bulk_docs requests (a single-threaded server pays per request).
	u := &unitFiller{r: r, b: b, writes: writes, unit: &writeUnit{b: b}}
	for _, d := range b.ready {
		if err := u.add(ctx, d); err != nil {
			return err
		}
	}
	b.ready = nil
	var chunk []missingDoc
	n := 0
	for i, m := range b.missing {
		chunk = append(chunk, m)
		n += len(m.revs)
		if n >= r.opts.BulkGetSize || i == len(b.missing)-1 {
			c := chunk
			handed := map[string]bool{} // revisions already written or queued, across attempts
			if err := r.retry(ctx, func() error { return r.fetchChunk(ctx, s, b, c, handed, u) }); err != nil {
				return err
			}
			chunk, n = nil, 0
		}
	}
	b.missing = nil
	return u.flush(ctx)
}

// unitFiller fills the _bulk_docs units of one batch and hands them to the
// writer.
type unitFiller struct {
	r      *replication
	b      *batch
	writes chan<- *writeUnit
	unit   *writeUnit
}

// add queues doc, handing the unit over when it is full.
func (u *unitFiller) add(ctx context.Context, doc *couchdoc.Doc) error {
	u.unit.docs = append(u.unit.docs, doc)
	u.unit.bytes += docSize(doc)
	if len(u.unit.docs) >= u.r.opts.BulkDocsSize || u.unit.bytes >= u.r.opts.BulkDocsBytes {
		return u.flush(ctx)
	}
	return nil
}

// flush hands the unit to the writer, if it holds anything.
func (u *unitFiller) flush(ctx context.Context) error {
	if len(u.unit.docs) == 0 {
		return nil
	}
	u.r.addStats(Stats{DocsRead: int64(len(u.unit.docs))})
	u.b.refs.Add(1)
	select {
	case u.writes <- u.unit:
	case <-ctx.Done():
		u.b.refs.Add(-1)
		return ctx.Err()
	}
	u.unit = &writeUnit{b: u.b}
	return nil
}

// putDocMin is the size of inline attachment bytes from which a document
// is written alone with PutDoc (multipart, no base64) rather than in a
// _bulk_docs request, for a target that is not an InlineWriter.
const putDocMin = 64 << 10

// writeAlone tells a document to write at once with PutDoc rather than in
// a _bulk_docs unit: one with an attachment body still to stream, or one
// with more inline attachment bytes than the target takes in a batch: its
// InlineAttachmentMax (inlineMax, 0 for a target that is not an
// InlineWriter), or below putDocMin bytes, which base64 in _bulk_docs
// would inflate little.
func writeAlone(doc *couchdoc.Doc, inlineMax int64) bool {
	if hasBody(doc) {
		return true
	}
	var n int64
	for _, a := range doc.Attachments {
		if !a.Stub {
			n += int64(len(a.Data))
		}
	}
	return n > inlineMax && n >= putDocMin
}

// hasBody reports an attachment body to stream (Attachment.Body).
func hasBody(doc *couchdoc.Doc) bool {
	for _, a := range doc.Attachments {
		if !a.Stub && a.Body != nil {
			return true
		}
	}
	return false
}

// readInline reads into Data the streamed attachment bodies of doc when
// they total at most max bytes. Past max, what was read is put back in
// front of the rest of the body, which stays streamed.
func readInline(doc *couchdoc.Doc, max int64) error {
	left := max
	for _, a := range doc.Attachments {
		if a.Stub || a.Body == nil {
			continue
		}
		if a.Length > left {
			return nil
		}
		left -= a.Length
	}
	left = max
	for _, a := range doc.Attachments {
		if a.Stub || a.Body == nil {
			continue
		}
		data, err := readAllSized(io.LimitReader(a.Body, left+1), min(a.Length, left))
		if err != nil {
			return err
		}
		if int64(len(data)) > left {
			a.Body = io.MultiReader(bytes.NewReader(data), a.Body)
			return nil
		}
		left -= int64(len(data))
		a.Data, a.Body, a.Follows = data, nil, false
	}
	return nil
}

// readAllSized is io.ReadAll into a buffer sized for the hint (the
// attachment's announced length): io.ReadAll starts at 512 bytes and
// grows, so a body of hundreds of KB cost about ten allocations, their
// zeroing and copies (BenchmarkMidSizeAttachments). A wrong hint only
// costs a grow.
func readAllSized(r io.Reader, hint int64) ([]byte, error) {
	if hint <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, hint+1) // +1: the read that sees EOF needs no grow
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// docSize estimates a document's share of a _bulk_docs body.
func docSize(doc *couchdoc.Doc) int {
	n := 100 + len(doc.ID) + len(doc.Body)
	if doc.Revisions != nil {
		n += 35 * len(doc.Revisions.IDs)
	}
	for name, a := range doc.Attachments {
		n += 100 + len(name) + len(a.Data)*4/3
	}
	return n
}
