package attachstore

import (
	"crypto/md5"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// ChunkSize is the size of one stored piece of attachment content.
const ChunkSize = 256 << 10

// Tx is the write transaction content is written in (package localdb's):
// its statements see the rows it buffers.
type Tx interface {
	Exec(query string, args ...any) (sql.Result, error)
	QueryRow(query string, args ...any) *sql.Row
}

// The content writer's statements (WriteQueries).
const (
	qHaveContent      = "SELECT 1 FROM att_content WHERE digest = ? AND present = 1"
	qInsertChunk      = "INSERT INTO att_chunks (digest, idx, data, crc) VALUES (?, ?, ?, ?)"
	qInsertContent    = "INSERT INTO att_content (digest, length, chunks) VALUES (?, ?, ?) ON CONFLICT (digest) DO UPDATE SET present = 1, chunks = excluded.chunks"
	qHoldContent      = "UPDATE rev_atts SET missing = 0 WHERE digest = ? AND missing = 1"
	qInsertEmptyChunk = "INSERT INTO att_chunks (digest, idx, data, crc) VALUES (?, 0, x'', 0)"
	qCountChunks      = "SELECT COUNT(*) FROM att_chunks WHERE digest = ?"
)

// WriteQueries are the statements content writes run, for the store to
// prepare when it opens.
var WriteQueries = []string{qHaveContent, qInsertChunk, qInsertContent, qHoldContent, qInsertEmptyChunk, qCountChunks}

// MD5Digest is the attachment digest of the bytes h has summed.
func MD5Digest(h hash.Hash) string {
	return "md5-" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// CheckDigest compares a stated digest with the computed one. Only md5
// digests can be checked; others are replaced by ours. Unless strict, a
// mismatch is accepted: CouchDB digests compressible attachments (text/*
// and the like) after gzipping them, so a digest that CouchDB states for
// the bytes it sends need not be their md5. The store then keeps its own
// md5 of the bytes as the digest; the length is still checked.
func CheckDigest(stated, got string, strict bool) bool {
	return !strict || stated == "" || !strings.HasPrefix(stated, "md5-") || stated == got
}

// InsertChunk stores chunk idx of the content under key.
func InsertChunk(t Tx, key string, idx int64, data []byte) error {
	_, err := t.Exec(qInsertChunk, key, idx, data, chunkCRC(data))
	return err
}

// InsertContent records content whose chunks were just stored, under key
// ("": under its digest); content known until now only by its digest (lazy
// attachments) becomes present for every attachment naming it.
func InsertContent(t Tx, digest string, length int64, key string) error {
	var chunks any
	if key != "" && key != digest {
		chunks = key
	}
	if _, err := t.Exec(qInsertContent, digest, length, chunks); err != nil {
		return err
	}
	_, err := t.Exec(qHoldContent, digest)
	return err
}

// HaveContent reports whether the bytes of content digest are stored.
func HaveContent(t Tx, digest string) (bool, error) {
	var one int
	err := t.QueryRow(qHaveContent, digest).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// WriteData stores the inline bytes (Data) of attachment a once per
// digest, in chunks, and returns the digest and length. A stated digest or
// length (wantLen >= 0) that does not match gives ErrDigestMismatch and no
// content is kept; unless strict, a digest mismatch is tolerated (see
// CheckDigest).
func WriteData(t Tx, a *couchdoc.Attachment, wantLen int64, strict bool) (string, int64, error) {
	d := a.DataDigest // hashed already by whoever read the bytes
	if d == "" {
		h := md5.New()
		h.Write(a.Data)
		d = MD5Digest(h)
	}
	if !CheckDigest(a.Digest, d, strict) || (wantLen >= 0 && wantLen != int64(len(a.Data))) {
		return "", 0, couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: digest or length does not match its data", a.Name)
	}
	if ok, err := HaveContent(t, d); err != nil || ok {
		return d, int64(len(a.Data)), err
	}
	for i := 0; i*ChunkSize < len(a.Data) || i == 0; i++ {
		end := min((i+1)*ChunkSize, len(a.Data))
		if err := InsertChunk(t, d, int64(i), a.Data[i*ChunkSize:end]); err != nil {
			return "", 0, fmt.Errorf("store attachment %q: %w", a.Name, err)
		}
	}
	return d, int64(len(a.Data)), InsertContent(t, d, int64(len(a.Data)), "")
}
