package localdb

import (
	"context"
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

// insertContent records content whose chunks were just stored, under key
// ("": under its digest); content known until now only by its digest (lazy
// attachments) becomes present for every attachment naming it.
func (w *wtx) insertContent(digest string, length int64, key string) error {
	var chunks any
	if key != "" && key != digest {
		chunks = key
	}
	if _, err := w.Exec(qInsertContent, digest, length, chunks); err != nil {
		return err
	}
	_, err := w.Exec(qHoldContent, digest)
	return err
}

func (w *wtx) haveContent(digest string) (bool, error) {
	var one int
	err := w.QueryRow(qHaveContent, digest).Scan(&one)
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
