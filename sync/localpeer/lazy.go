package localpeer

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
)

// ReadStubs reads revisions as BulkGet does, every attachment a stub with
// its metadata (sync.StubReader).
func (p *Peer) ReadStubs(ctx context.Context, reqs []sync.BulkGetRequest, fn func(*couchdoc.Doc, error) error) error {
	stubs := make([]sync.BulkGetRequest, len(reqs))
	for i, r := range reqs {
		stubs[i] = sync.BulkGetRequest{ID: r.ID, Rev: r.Rev}
	}
	return p.bulkGet(ctx, stubs, false, fn)
}

// BulkDocsLazy stores revisions as BulkDocs does, recording attachment
// stubs the store lacks as not downloaded (sync.LazyWriter).
func (p *Peer) BulkDocsLazy(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	return p.db.BulkDocsLazy(ctx, docs)
}

// GetAttachment streams an attachment's bytes from the start (ranged is
// always false; the caller skips what it has). A body the store lacks is
// localdb.ErrAttachmentNotDownloaded (sync.AttachmentGetter).
func (p *Peer) GetAttachment(ctx context.Context, id, rev, name string, offset int64) (io.ReadCloser, bool, error) {
	_, rc, err := p.db.OpenAttachment(ctx, id, rev, name)
	return rc, false, err
}

// FetchOptions tune FetchAttachmentWith.
type FetchOptions struct {
	// Retries is how many times in a row a cut transfer is resumed
	// without progress. 0 means 5; negative, none.
	Retries int
	// OnProgress, when set, is called as bytes arrive with how many of
	// the attachment's total have been read.
	OnProgress func(done, total int64)
}

// FetchAttachment downloads the bytes of attachment name of document
// id's winning revision, which db knows (a lazy pull, EvictAttachment)
// but lacks, from remote, streamed into db: see FetchAttachmentWith.
func FetchAttachment(ctx context.Context, remote sync.Peer, db *localdb.DB, id, name string) error {
	return FetchAttachmentWith(ctx, remote, db, id, name, FetchOptions{})
}

// FetchAttachmentWith is FetchAttachment with options. remote must be a
// sync.AttachmentGetter (sync/couch's DB, a Peer). The bytes are asked
// of the winning revision, or, when remote lacks it (a local edit since),
// of its ancestors back to the attachment's revpos. A cut transfer is
// resumed (HTTP Range; else re-read from the start, what was read being
// skipped). When it still fails (retries spent, ctx cancelled, the
// process killed), the bytes stored so far stay in db
// (localdb.DownloadAttachment): the next call, in this process or after
// the store is reopened, asks remote for the rest only. Bytes without the attachment's length or md5 digest are
// refused with couchdoc.ErrDigestMismatch and nothing is stored (the
// digest CouchDB states for a gzip-stored attachment is over the gzip
// bytes, not seen here: only the length is checked then), and the bytes
// kept are discarded. Bytes already here make it a no-op.
func FetchAttachmentWith(ctx context.Context, remote sync.Peer, db *localdb.DB, id, name string, opts FetchOptions) error {
	g, ok := remote.(sync.AttachmentGetter)
	if !ok {
		return fmt.Errorf("fetch attachment: %s cannot serve attachments", remote)
	}
	switch {
	case opts.Retries == 0:
		opts.Retries = 5
	case opts.Retries < 0:
		opts.Retries = 0
	}
	doc, err := db.Get(ctx, id, localdb.GetOptions{Revs: true})
	if err != nil {
		return err
	}
	a := doc.Attachments[name]
	if a == nil {
		return couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment")
	}
	if !a.NotDownloaded {
		return nil
	}
	a.Name = name
	var revs []string
	if r := doc.Revisions; r != nil {
		for i, h := range r.IDs {
			if gen := r.Start - i; gen >= a.RevPos {
				revs = append(revs, couchdoc.FormatRev(gen, h))
			}
		}
	}
	if len(revs) == 0 {
		revs = []string{doc.Rev}
	}
	for i, rev := range revs {
		err = db.DownloadAttachment(ctx, id, name, func(ctx context.Context, offset int64) (io.ReadCloser, error) {
			rc := sync.AttachmentReaderFrom(ctx, g, id, rev, a, opts.Retries, offset)
			if opts.OnProgress == nil {
				return rc, nil
			}
			return &progressReader{r: rc, c: rc, done: offset, total: a.Length, fn: opts.OnProgress}, nil
		})
		if err == nil || !errors.Is(err, couchdoc.ErrNotFound) || i == len(revs)-1 {
			return err
		}
	}
	return err
}

type progressReader struct {
	r     io.Reader
	c     io.Closer
	done  int64
	total int64
	fn    func(done, total int64)
}

func (p *progressReader) Close() error { return p.c.Close() }

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.done += int64(n)
		p.fn(p.done, p.total)
	}
	return n, err
}

// FetchFrom returns a sync.Options.FetchMissing that downloads a missing
// body into db from remote (FetchAttachment), for a push to a target
// other than the database the bodies were pulled from.
func FetchFrom(remote sync.Peer, db *localdb.DB) func(ctx context.Context, id, name string) error {
	return func(ctx context.Context, id, name string) error {
		return FetchAttachment(ctx, remote, db, id, name)
	}
}
