package sync

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
)

// Attachments says which attachment bodies a pull brings: all (Eager,
// the default), none (Lazy: documents arrive with their attachments'
// metadata and the target records the bodies as not downloaded), or only
// those of at most some length (LazyOver). Bodies left behind are
// fetched on demand (localpeer.FetchAttachment).
type Attachments struct {
	lazy bool
	over int64 // with lazy: bodies of at most this length come anyway
}

// Eager brings every attachment body: CouchDB's replication.
var Eager = Attachments{}

// Lazy brings no attachment body.
var Lazy = Attachments{lazy: true}

// LazyOver brings the bodies of attachments of at most n bytes and leaves
// the larger ones behind.
func LazyOver(n int64) Attachments { return Attachments{lazy: true, over: max(n, 0)} }

// IsLazy reports whether some bodies may be left behind.
func (a Attachments) IsLazy() bool { return a.lazy }

// String is the form ParseAttachments reads: "eager", "lazy" or
// "lazy-over=N".
func (a Attachments) String() string {
	switch {
	case !a.lazy:
		return "eager"
	case a.over == 0:
		return "lazy"
	}
	return "lazy-over=" + strconv.FormatInt(a.over, 10)
}

// ParseAttachments reads "eager", "lazy" or "lazy-over=BYTES" (the CLI's
// and the mobile layer's form); "" is eager.
func ParseAttachments(s string) (Attachments, error) {
	switch {
	case s == "" || s == "eager":
		return Eager, nil
	case s == "lazy":
		return Lazy, nil
	case strings.HasPrefix(s, "lazy-over="):
		n, err := strconv.ParseInt(strings.TrimPrefix(s, "lazy-over="), 10, 64)
		if err == nil && n >= 0 {
			return LazyOver(n), nil
		}
	}
	return Eager, fmt.Errorf("attachments %q: want eager, lazy or lazy-over=BYTES", s)
}

// StubReader is the optional capability of reading revisions with their
// attachments as stubs carrying full metadata (CouchDB's attachments=false
// with att_encoding_info=true), for lazy attachments.
type StubReader interface {
	// ReadStubs reads the requested revisions (AttsSince is ignored) with
	// the contract of BulkGetter.BulkGet for fn, every attachment a stub.
	ReadStubs(ctx context.Context, reqs []BulkGetRequest, fn func(doc *couchdoc.Doc, revErr error) error) error
}

// LazyWriter is the optional capability of a target that records
// attachments whose bodies it was not given (the local store).
type LazyWriter interface {
	// BulkDocsLazy is Peer.BulkDocs where an attachment stub the target
	// lacks is recorded with its metadata as not downloaded instead of
	// failing with missing_stub. Attachments may be streamed (Body).
	BulkDocsLazy(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error)
}

// AttachmentGetter is the optional capability of serving one attachment's
// bytes (GET /{db}/{id}/{name}?rev=...), for fetching on demand.
type AttachmentGetter interface {
	// GetAttachment streams the decoded bytes of attachment name of
	// revision rev of document id, from byte offset on when the peer
	// honours a range (ranged true) or from the start (ranged false).
	// Close the body.
	GetAttachment(ctx context.Context, id, rev, name string, offset int64) (body io.ReadCloser, ranged bool, err error)
}

// checkLazy checks that the peers can do opts.Attachments.
func checkLazy(opts Options) error {
	if !opts.Attachments.lazy {
		return nil
	}
	_, okS := opts.Source.(StubReader)
	_, okT := opts.Target.(LazyWriter)
	_, okG := opts.Source.(AttachmentGetter)
	if !okS || !okT || (opts.Attachments.over > 0 && !okG) {
		return fmt.Errorf("%w (source %s, target %s)", ErrLazyUnsupported, opts.Source, opts.Target)
	}
	return nil
}

// AttachmentReader returns a reader of attachment a (a stub with its
// length, digest and encoding) of revision rev of document id on src: it
// resumes a cut transfer where it stopped (a Range request; a peer that
// answers from the start has what was already read skipped), up to
// retries times in a row without progress (waiting with backoff from the
// second), and fails with
// couchdoc.ErrDigestMismatch at the end when the bytes do not have a's
// length or md5 digest. The digest of a gzip-stored attachment (Encoding
// "gzip") is over bytes never seen here and is not checked; the length
// is.
func AttachmentReader(ctx context.Context, src AttachmentGetter, id, rev string, a *couchdoc.Attachment, retries int) io.ReadCloser {
	r := &resumingReader{ctx: ctx, src: src, id: id, rev: rev, att: a, retries: retries}
	if a.Encoding == "" && strings.HasPrefix(a.Digest, "md5-") {
		r.h = md5.New()
	}
	return r
}

type resumingReader struct {
	ctx     context.Context
	src     AttachmentGetter
	id, rev string
	att     *couchdoc.Attachment
	retries int
	h       hash.Hash
	body    io.ReadCloser
	off     int64
	fails   int
	err     error
}

func (r *resumingReader) Read(p []byte) (int, error) {
	for r.err == nil {
		if r.body == nil {
			if err := r.open(); err != nil {
				r.err = err
				break
			}
		}
		n, err := r.body.Read(p)
		if n > 0 {
			if r.off+int64(n) > r.att.Length {
				r.err = couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q of %q: more than its %d bytes", r.att.Name, r.id, r.att.Length)
				break
			}
			r.off += int64(n)
			r.fails = 0
			if r.h != nil {
				r.h.Write(p[:n])
			}
			return n, nil
		}
		if err == io.EOF && r.off == r.att.Length {
			if r.h != nil {
				if d := "md5-" + base64.StdEncoding.EncodeToString(r.h.Sum(nil)); d != r.att.Digest {
					r.err = couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q of %q: digest %s, want %s", r.att.Name, r.id, d, r.att.Digest)
					break
				}
			}
			r.err = io.EOF
			break
		}
		if err != nil { // cut short: resume
			r.body.Close()
			r.body = nil
			if r.fails++; r.fails > r.retries || r.ctx.Err() != nil {
				r.err = fmt.Errorf("attachment %q of %q: read %d of %d bytes: %w", r.att.Name, r.id, r.off, r.att.Length, cmpErr(r.ctx.Err(), err))
			} else if r.fails > 1 {
				r.pause()
			}
		}
	}
	return 0, r.err
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	if b == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return b
}

// open (re)starts the transfer at r.off.
func (r *resumingReader) open() error {
	for {
		body, ranged, err := r.src.GetAttachment(r.ctx, r.id, r.rev, r.att.Name, r.off)
		if err != nil {
			if r.fails++; r.fails > r.retries || !isTransient(err) || r.ctx.Err() != nil {
				return err
			}
			r.pause()
			continue
		}
		if !ranged && r.off > 0 {
			if _, err := io.CopyN(io.Discard, body, r.off); err != nil {
				body.Close()
				if r.fails++; r.fails > r.retries || r.ctx.Err() != nil {
					return fmt.Errorf("attachment %q of %q: skip %d bytes: %w", r.att.Name, r.id, r.off, err)
				}
				continue
			}
		}
		r.body = body
		return nil
	}
}

// pause waits before another attempt after failures without progress
// (the first resume after progress goes at once).
func (r *resumingReader) pause() {
	t := time.NewTimer(backoff(r.fails-1, DefaultRetryDelay, 5*time.Second))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.ctx.Done():
	}
}

func (r *resumingReader) Close() error {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
	if r.err == nil {
		r.err = errors.New("sync: read of a closed attachment")
	}
	return nil
}

// writeBulk writes a _bulk_docs unit, lazily when the pull is lazy.
func (r *replication) writeBulk(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	if lw, ok := r.opts.Target.(LazyWriter); ok && r.opts.Attachments.lazy {
		res, err := lw.BulkDocsLazy(ctx, docs)
		if err != nil {
			return nil, err
		}
		var failed []couchdoc.DocResult
		for _, d := range res {
			if d.Error != "" {
				failed = append(failed, d)
			}
		}
		return failed, nil
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
