package attachstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
	"github.com/settee/settee/localdb/localdbtest"
)

// contentSizes are the lengths around the chunk boundaries.
var contentSizes = []struct {
	name   string
	n      int
	chunks int64
}{
	{"empty", 0, 1}, // one empty chunk
	{"one byte", 1, 1},
	{"one chunk", attachstore.ChunkSize, 1},
	{"one chunk and a byte", attachstore.ChunkSize + 1, 2},
	{"several chunks", 3*attachstore.ChunkSize + 17, 4},
}

// TestWriteDataReadsBack: inline bytes written with WriteData are stored
// once under their md5 in the expected number of chunks, and read back
// byte for byte by ReadAll and by a Reader whose reads straddle the chunk
// boundaries; every chunk has a checksum (VerifiesContent).
func TestWriteDataReadsBack(t *testing.T) {
	s := openStore(t)
	for i, c := range contentSizes {
		t.Run(c.name, func(t *testing.T) {
			data := randomBytes(c.n, int64(i))
			digest, length := writeContent(t, s, data), int64(c.n)
			if digest != md5Of(data) {
				t.Fatalf("WriteData gave digest %s, want %s", digest, md5Of(data))
			}
			if got := localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM att_chunks WHERE digest = ?", digest); got != c.chunks {
				t.Errorf("%d chunks stored, want %d", got, c.chunks)
			}
			if got := localdbtest.Count(t, s.db, "SELECT length FROM att_content WHERE digest = ? AND present = 1", digest); got != int64(c.n) {
				t.Errorf("att_content.length = %d, want %d", got, c.n)
			}
			all, err := attachstore.ReadAll(context.Background(), s.content, digest)
			if err != nil || !bytes.Equal(all, data) {
				t.Fatalf("ReadAll: %d bytes, %v; want the %d written", len(all), err, c.n)
			}
			r := attachstore.NewReader(context.Background(), s.chunk, s.crc, digest, length)
			if !r.VerifiesContent() {
				t.Error("VerifiesContent = false for chunks written with checksums")
			}
			got, err := readOdd(r)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Reader: %d bytes, %v; want the %d written", len(got), err, c.n)
			}
			r.Close()
			if _, err := r.Read(make([]byte, 1)); err == nil {
				t.Error("Read after Close succeeded")
			}
		})
	}
}

// readOdd reads r to its end 1000 bytes at a time (not a divisor of
// ChunkSize, so reads straddle chunks).
func readOdd(r io.Reader) ([]byte, error) {
	var out []byte
	p := make([]byte, 1000)
	for {
		n, err := r.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestWriteDataStoresOnce: the same bytes written again (another
// attachment, another transaction, or twice in one) are not stored again.
func TestWriteDataStoresOnce(t *testing.T) {
	s := openStore(t)
	data := randomBytes(2*attachstore.ChunkSize+5, 1)
	write := func(tx *sql.Tx, name string) error {
		d, _, err := attachstore.WriteData(tx, &couchdoc.Attachment{Name: name, Data: data}, int64(len(data)), true)
		if err == nil && d != md5Of(data) {
			t.Errorf("WriteData(%s) = %s, want %s", name, d, md5Of(data))
		}
		return err
	}
	if err := s.update(t, func(tx *sql.Tx) error { return write(tx, "a") }); err != nil {
		t.Fatal(err)
	}
	err := s.update(t, func(tx *sql.Tx) error {
		if err := write(tx, "b"); err != nil {
			return err
		}
		return write(tx, "c")
	})
	if err != nil {
		t.Fatalf("writing stored bytes again: %v", err)
	}
	if n := localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM att_content"); n != 1 {
		t.Errorf("%d att_content rows, want 1", n)
	}
	if n := localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM att_chunks"); n != 3 {
		t.Errorf("%d att_chunks rows, want 3", n)
	}
	if err := s.checkChunks(t); err != nil {
		t.Errorf("CheckChunks: %v", err)
	}
}

// TestWriteDataMismatch: a stated md5 that is not the bytes' is refused
// with ErrDigestMismatch when strict and replaced by the bytes' md5 when
// not (CouchDB digests gzipped text); a stated digest of another kind is
// not checked; a stated length that is not the bytes' is refused either
// way. A refused write stores nothing.
func TestWriteDataMismatch(t *testing.T) {
	data := []byte("settee attachment")
	other := md5Of([]byte("something else"))
	for _, c := range []struct {
		name   string
		stated string
		length int64
		strict bool
		ok     bool
	}{
		{"md5 of other bytes, strict", other, -1, true, false},
		{"md5 of other bytes, lenient", other, -1, false, true},
		{"not an md5, strict", "sha-abc", -1, true, true},
		{"right md5", md5Of(data), int64(len(data)), true, true},
		{"wrong length, lenient", "", int64(len(data)) + 1, false, false},
		{"wrong length, strict", md5Of(data), int64(len(data)) - 1, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t)
			var digest string
			err := s.update(t, func(tx *sql.Tx) (err error) {
				a := &couchdoc.Attachment{Name: "a", Digest: c.stated, Data: data}
				digest, _, err = attachstore.WriteData(tx, a, c.length, c.strict)
				return err
			})
			if !c.ok {
				if !errors.Is(err, couchdoc.ErrDigestMismatch) {
					t.Fatalf("WriteData: %v, want ErrDigestMismatch", err)
				}
				if n := localdbtest.Count(t, s.db, "SELECT (SELECT COUNT(*) FROM att_content) + (SELECT COUNT(*) FROM att_chunks)"); n != 0 {
					t.Errorf("a refused write left %d rows", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("WriteData: %v", err)
			}
			if digest != md5Of(data) || !s.have(t, digest) {
				t.Errorf("stored under %s (present: %v), want the bytes' md5 %s", digest, s.have(t, digest), md5Of(data))
			}
		})
	}
}
