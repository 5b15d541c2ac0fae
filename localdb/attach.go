package localdb

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	gosync "sync"

	"github.com/settee/settee/couchdoc"
)

// chunkSize is the size of one stored piece of attachment content.
const chunkSize = 256 << 10

// inlineMax is the largest attachment returned inline (Data) by reads with
// attachments; larger ones come as a lazily opened Body.
const inlineMax = 64 << 10

// storedAtt is one attachment of a stored revision.
type storedAtt struct {
	Name        string
	ContentType string
	Digest      string
	Length      int64
	RevPos      int
	Encoding    string
	// Missing: the store lacks the bytes (no revision holds them).
	Missing bool
}

func (a *storedAtt) stub() *couchdoc.Attachment {
	return &couchdoc.Attachment{Name: a.Name, ContentType: a.ContentType, Digest: a.Digest, Length: a.Length, RevPos: a.RevPos, Stub: true,
		Encoding: a.Encoding, NotDownloaded: a.Missing}
}

func md5Digest(h hash.Hash) string {
	return "md5-" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// checkDigest compares a stated digest with the computed one. Only md5
// digests can be checked; others are replaced by ours. Unless strict, a
// mismatch is accepted: CouchDB digests compressible attachments (text/*
// and the like) after gzipping them, so a digest that CouchDB states for
// the bytes it sends need not be their md5. The store then keeps its own
// md5 of the bytes as the digest; the length is still checked.
func checkDigest(stated, got string, strict bool) bool {
	return !strict || stated == "" || !strings.HasPrefix(stated, "md5-") || stated == got
}

// writeContent stores an attachment's bytes once per digest, in chunks, and
// returns the digest and length. Streamed bodies were staged (DB.stage)
// before the transaction; a stated digest or length (wantLen >= 0) that
// does not match gives ErrDigestMismatch and no content is kept.
//
// strict is set for local edits; replicated writes tolerate a digest
// mismatch (see checkDigest).
func (w *wtx) writeContent(a *couchdoc.Attachment, wantLen int64, strict bool) (string, int64, error) {
	if a.Body == nil {
		d := a.DataDigest // hashed already by whoever read the bytes
		if d == "" {
			h := md5.New()
			h.Write(a.Data)
			d = md5Digest(h)
		}
		if !checkDigest(a.Digest, d, strict) || (wantLen >= 0 && wantLen != int64(len(a.Data))) {
			return "", 0, couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: digest or length does not match its data", a.Name)
		}
		if ok, err := w.haveContent(d); err != nil || ok {
			return d, int64(len(a.Data)), err
		}
		for i := 0; i*chunkSize < len(a.Data) || i == 0; i++ {
			end := min((i+1)*chunkSize, len(a.Data))
			if err := w.insertChunk(d, int64(i), a.Data[i*chunkSize:end]); err != nil {
				return "", 0, fmt.Errorf("store attachment %q: %w", a.Name, err)
			}
		}
		return d, int64(len(a.Data)), w.insertContent(d, int64(len(a.Data)), "")
	}
	s := w.staged[a]
	if s == nil {
		return "", 0, fmt.Errorf("localdb: attachment %q body was not staged", a.Name)
	}
	return w.useStaged(a, s, wantLen, strict)
}

// insertContent records content whose chunks were just stored, under key
// ("": under its digest); content known until now only by its digest (lazy
// attachments) becomes present for every attachment naming it.
func (w *wtx) insertContent(digest string, length int64, key string) error {
	var chunks any
	if key != "" && key != digest {
		chunks = key
	}
	if _, err := w.exec(qInsertContent, digest, length, chunks); err != nil {
		return err
	}
	_, err := w.exec(qHoldContent, digest)
	return err
}

func (w *wtx) haveContent(digest string) (bool, error) {
	var one int
	err := w.queryRow(qHaveContent, digest).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// revAtts reads the attachments of every stored revision of a document, by
// revision id.
func (w *wtx) revAtts(docID int64) (map[string]map[string]*storedAtt, error) {
	s, err := w.stmt(qRevAtts)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(w.ctx, docID)
	if err != nil {
		return nil, err
	}
	return scanRevAtts(rows)
}

func scanRevAtts(rows *sql.Rows) (map[string]map[string]*storedAtt, error) {
	defer rows.Close()
	out := make(map[string]map[string]*storedAtt)
	for rows.Next() {
		var rev string
		a := &storedAtt{}
		if err := rows.Scan(&rev, &a.Name, &a.Digest, &a.ContentType, &a.Length, &a.RevPos, &a.Encoding, &a.Missing); err != nil {
			return nil, err
		}
		if out[rev] == nil {
			out[rev] = make(map[string]*storedAtt)
		}
		out[rev][a.Name] = a
	}
	return out, rows.Err()
}

// resolveAtts turns a document's attachments into stored ones: stubs are
// looked up in candidates (nearest first: for a local edit the parent
// revision, for a replicated one the stored ancestors), and bytes are
// stored. revpos of new bytes is gen unless replicated with its own.
func (w *wtx) resolveAtts(docID string, atts map[string]*couchdoc.Attachment, candidates []map[string]*storedAtt, gen int, replicated bool) ([]*storedAtt, error) {
	if len(atts) == 0 {
		return nil, nil
	}
	out := make([]*storedAtt, 0, len(atts))
	// Stubs first, so a missing stub fails before any byte is stored.
	for name, a := range atts {
		if !a.Stub {
			if a.Data == nil && a.Body == nil {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "attachment %q has no data", name)
			}
			continue
		}
		// By name, nearest candidate first, as CouchDB's merge_stubs. A
		// replicated stub newer (revpos) than what we hold is not ours.
		var found *storedAtt
		for _, c := range candidates {
			if s := c[name]; s != nil && (!replicated || a.RevPos <= s.RevPos) {
				found = s
				break
			}
		}
		if found == nil && replicated && a.Digest != "" {
			// Any revision holding the same content under that name.
			for _, c := range candidates {
				for _, s := range c {
					if s.Digest == a.Digest {
						found = &storedAtt{Name: name, ContentType: s.ContentType, Digest: s.Digest, Length: s.Length, RevPos: s.RevPos,
							Encoding: s.Encoding, Missing: s.Missing}
						break
					}
				}
			}
		}
		if found == nil && replicated && w.lazy && a.Digest != "" {
			var err error
			if found, err = w.absentAtt(name, a); err != nil {
				return nil, err
			}
		}
		if found == nil {
			return nil, couchdoc.Errorf(couchdoc.ErrMissingStub, "Invalid attachment stub in %s for %s", docID, name)
		}
		sa := *found
		sa.Name = name
		if replicated && a.RevPos > 0 {
			sa.RevPos = a.RevPos
		}
		out = append(out, &sa)
	}
	for name, a := range atts {
		if a.Stub {
			continue
		}
		wantLen := int64(-1)
		if a.Body != nil && a.Length > 0 {
			wantLen = a.Length
		}
		d, n, err := w.writeContent(a, wantLen, !replicated)
		if err != nil {
			return nil, err
		}
		ct := a.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		rp := gen
		if replicated && a.RevPos > 0 {
			rp = a.RevPos
		}
		out = append(out, &storedAtt{Name: name, ContentType: ct, Digest: d, Length: n, RevPos: rp})
	}
	return out, nil
}

// attReader streams one attachment's content chunk by chunk from the read
// pool; it holds no transaction between chunks.
type attReader struct {
	ctx    context.Context
	db     *DB
	digest string
	length int64 // expected; a shorter stream is an error
	read   int64
	idx    int
	buf    []byte  // unread part of store
	store  *[]byte // the chunk read last (from chunkBufs)
	done   bool
	closed bool
}

func (r *attReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, errors.New("localdb: read of a closed attachment")
	}
	for len(r.buf) == 0 {
		if r.done {
			r.release()
			if r.read != r.length {
				// The content went away (compacted) while being read.
				return 0, fmt.Errorf("localdb: attachment content %s: read %d of %d bytes: %w", r.digest, r.read, r.length, io.ErrUnexpectedEOF)
			}
			return 0, io.EOF
		}
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.read += int64(n)
	return n, nil
}

// next reads the next chunk into the reader's own buffer.
func (r *attReader) next() error {
	rows, err := r.db.reads.stmts[rChunk].QueryContext(r.ctx, r.digest, r.idx)
	if err != nil {
		return fmt.Errorf("read attachment chunk: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read attachment chunk: %w", err)
		}
		r.done = true
		return nil
	}
	var raw sql.RawBytes
	var crc sql.NullInt64
	if err := rows.Scan(&raw, &crc); err != nil {
		return fmt.Errorf("read attachment chunk: %w", err)
	}
	if err := checkChunk(r.digest, int64(r.idx), raw, crc); err != nil {
		return err
	}
	if r.store == nil && len(raw) <= chunkSize {
		r.store = chunkBufs.Get().(*[]byte)
	}
	if r.store == nil {
		r.store = new([]byte)
	}
	*r.store = append((*r.store)[:0], raw...)
	r.buf = *r.store
	r.idx++
	return nil
}

// chunkBufs holds attReaders' chunk buffers: settee serve streams every
// attachment of a pull through one, and a new 256-KiB buffer for each
// attachment was an eighth of what it allocated.
var chunkBufs = gosync.Pool{New: func() any {
	b := make([]byte, 0, chunkSize)
	return &b
}}

// VerifiesContent reports whether every chunk of the content has a
// checksum, which Read checks (package wire asks for it): the content was
// checked against its digest when it was stored, so a writer of the body
// need not sum its md5 again.
func (r *attReader) VerifiesContent() bool {
	var unchecked bool
	err := r.db.reads.stmts[rNoCRC].QueryRowContext(r.ctx, r.digest).Scan(&unchecked)
	return err == nil && !unchecked
}

func (r *attReader) Close() error {
	r.closed = true
	r.buf = nil
	r.release()
	return nil
}

// release gives the chunk buffer back once nothing is left to read from
// it.
func (r *attReader) release() {
	if r.store != nil && cap(*r.store) == chunkSize {
		chunkBufs.Put(r.store)
	}
	r.store = nil
}

// readAllContent reads small content whole.
func (r *rtx) readAllContent(digest string) ([]byte, error) {
	rows, err := r.stmt(rContent).QueryContext(r.ctx, digest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []byte
	for idx := int64(0); rows.Next(); idx++ {
		var b []byte
		var crc sql.NullInt64
		if err := rows.Scan(&b, &crc); err != nil {
			return nil, err
		}
		if err := checkChunk(digest, idx, b, crc); err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if out == nil {
		out = []byte{}
	}
	return out, rows.Err()
}

// querier is what reads need of a *sql.Tx or *sql.DB.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
