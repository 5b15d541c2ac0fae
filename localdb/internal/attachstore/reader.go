package attachstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
)

// The read pool's statements of content (ReadQueries): the chunks of
// content digest are stored under its digest or under the key it names
// (att_content.chunks).
const (
	chunksOf = "(SELECT COALESCE(chunks, digest) FROM att_content WHERE digest = ?1)"
	// QContent reads every chunk of a content, in order (ReadAll).
	QContent = "SELECT data, crc FROM att_chunks WHERE digest = " + chunksOf + " ORDER BY idx"
	// QChunk reads one chunk (Reader).
	QChunk = "SELECT data, crc FROM att_chunks WHERE digest = " + chunksOf + " AND idx = ?2"
	// QNoCRC tells whether a chunk has no checksum (Reader).
	QNoCRC = "SELECT EXISTS (SELECT 1 FROM att_chunks WHERE digest = " + chunksOf + " AND crc IS NULL)"
)

// ReadQueries are the statements content reads run, for the store's read
// pool to prepare.
var ReadQueries = []string{QContent, QChunk, QNoCRC}

// Reader streams one attachment's content chunk by chunk with the read
// pool's statements QChunk and QNoCRC; it holds no transaction between
// chunks.
type Reader struct {
	ctx          context.Context
	chunk, noCRC *sql.Stmt
	digest       string
	length       int64 // expected; a shorter stream is an error
	read         int64
	idx          int
	buf          []byte  // unread part of store
	store        *[]byte // the chunk read last (from chunkBufs)
	done         bool
	closed       bool
}

// NewReader returns a reader of content digest, which has length bytes;
// chunk and noCRC are QChunk and QNoCRC prepared on the read pool.
func NewReader(ctx context.Context, chunk, noCRC *sql.Stmt, digest string, length int64) *Reader {
	return &Reader{ctx: ctx, chunk: chunk, noCRC: noCRC, digest: digest, length: length}
}

// Read reads the next bytes of the content, each chunk checked against its
// checksum.
func (r *Reader) Read(p []byte) (int, error) {
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
func (r *Reader) next() error {
	rows, err := r.chunk.QueryContext(r.ctx, r.digest, r.idx)
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
	if err := CheckChunk(r.digest, int64(r.idx), raw, crc); err != nil {
		return err
	}
	if r.store == nil && len(raw) <= ChunkSize {
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

// chunkBufs holds Readers' chunk buffers: settee serve streams every
// attachment of a pull through one, and a new 256-KiB buffer for each
// attachment was an eighth of what it allocated.
var chunkBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, ChunkSize)
	return &b
}}

// VerifiesContent reports whether every chunk of the content has a
// checksum, which Read checks (package wire asks for it): the content was
// checked against its digest when it was stored, so a writer of the body
// need not sum its md5 again.
func (r *Reader) VerifiesContent() bool {
	var unchecked bool
	err := r.noCRC.QueryRowContext(r.ctx, r.digest).Scan(&unchecked)
	return err == nil && !unchecked
}

// Close ends the read; later reads fail.
func (r *Reader) Close() error {
	r.closed = true
	r.buf = nil
	r.release()
	return nil
}

// release gives the chunk buffer back once nothing is left to read from
// it.
func (r *Reader) release() {
	if r.store != nil && cap(*r.store) == ChunkSize {
		chunkBufs.Put(r.store)
	}
	r.store = nil
}

// ReadAll reads small content whole, with content, QContent prepared for
// the caller's read transaction.
func ReadAll(ctx context.Context, content *sql.Stmt, digest string) ([]byte, error) {
	rows, err := content.QueryContext(ctx, digest)
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
		if err := CheckChunk(digest, idx, b, crc); err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if out == nil {
		out = []byte{}
	}
	return out, rows.Err()
}
