package sync

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
)

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

// AttachmentReaderFrom is AttachmentReader starting at byte offset of the
// attachment, for a download resumed from bytes kept earlier (a Range
// request; a peer that answers from the start has the first offset bytes
// skipped). The bytes before offset are not seen here, so the digest is
// not checked, only the length: the caller checks the digest over all
// the bytes.
func AttachmentReaderFrom(ctx context.Context, src AttachmentGetter, id, rev string, a *couchdoc.Attachment, retries int, offset int64) io.ReadCloser {
	return &resumingReader{ctx: ctx, src: src, id: id, rev: rev, att: a, retries: retries, off: offset}
}
