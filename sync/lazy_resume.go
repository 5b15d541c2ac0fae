package sync

import (
	"context"
	"io"

	"github.com/settee/settee/couchdoc"
)

// AttachmentReaderFrom is AttachmentReader starting at byte offset of the
// attachment, for a download resumed from bytes kept earlier (a Range
// request; a peer that answers from the start has the first offset bytes
// skipped). The bytes before offset are not seen here, so the digest is
// not checked, only the length: the caller checks the digest over all
// the bytes.
func AttachmentReaderFrom(ctx context.Context, src AttachmentGetter, id, rev string, a *couchdoc.Attachment, retries int, offset int64) io.ReadCloser {
	return &resumingReader{ctx: ctx, src: src, id: id, rev: rev, att: a, retries: retries, off: offset}
}
