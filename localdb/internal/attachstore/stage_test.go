package attachstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
	"github.com/settee/settee/localdb/localdbtest"
)

// stage streams data into s under key, each StageChunks chunks in a
// committed transaction of its own, and returns the record and how many
// transactions it took.
func stage(t *testing.T, s *store, key string, data []byte) (*attachstore.Staged, int, error) {
	t.Helper()
	st := &attachstore.Staged{Key: key}
	txs := 0
	err := attachstore.Stage(&couchdoc.Attachment{Name: "a", Body: bytes.NewReader(data)}, st, func(fn func(attachstore.Tx) error) error {
		txs++
		return s.update(t, func(tx *sql.Tx) error { return fn(tx) })
	})
	return st, txs, err
}

// useStaged runs UseStaged in a transaction of its own.
func useStaged(t *testing.T, s *store, a *couchdoc.Attachment, st *attachstore.Staged, wantLen int64) (string, error) {
	t.Helper()
	var digest string
	err := s.update(t, func(tx *sql.Tx) (err error) {
		digest, _, err = attachstore.UseStaged(tx, a, st, wantLen, true)
		return err
	})
	return digest, err
}

// TestStageUseStaged: a streamed body is staged under its key in
// transactions of StageChunks chunks, is not content until UseStaged
// records it, and is then found by its md5 and read back whole, its
// chunks left where they were staged (att_content.chunks).
func TestStageUseStaged(t *testing.T) {
	s := openStore(t)
	per := attachstore.StageChunks * attachstore.ChunkSize
	for i, c := range []struct {
		name string
		n    int
		txs  int
	}{
		{"empty", 0, 0},
		{"one byte", 1, 1},
		{"one chunk and a byte", attachstore.ChunkSize + 1, 1},
		{"two transactions", per + 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := randomBytes(c.n, int64(100+i))
			key := "tmp-" + c.name
			st, txs, err := stage(t, s, key, data)
			if err != nil {
				t.Fatalf("Stage: %v", err)
			}
			if st.Digest != md5Of(data) || st.Length != int64(c.n) || txs != c.txs {
				t.Fatalf("Stage: %s, %d bytes in %d transactions; want %s, %d in %d", st.Digest, st.Length, txs, md5Of(data), c.n, c.txs)
			}
			if s.have(t, st.Digest) {
				t.Fatal("staged bytes are content before UseStaged")
			}
			digest, err := useStaged(t, s, &couchdoc.Attachment{Name: "a", Digest: md5Of(data)}, st, int64(c.n))
			if err != nil || digest != st.Digest {
				t.Fatalf("UseStaged = %s, %v; want %s", digest, err, st.Digest)
			}
			if !s.have(t, digest) {
				t.Fatal("UseStaged did not record the content")
			}
			all, err := attachstore.ReadAll(context.Background(), s.content, digest)
			if err != nil || !bytes.Equal(all, data) {
				t.Fatalf("ReadAll: %d bytes, %v; want the %d staged", len(all), err, c.n)
			}
			got, err := readOdd(attachstore.NewReader(context.Background(), s.chunk, s.crc, digest, int64(c.n)))
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("Reader: %d bytes, %v; want the %d staged", len(got), err, c.n)
			}
			if c.n > 0 && localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM att_content WHERE digest = ? AND chunks = ?", digest, key) != 1 {
				t.Error("the content does not name the staged chunks")
			}
		})
	}
	if err := s.checkChunks(t); err != nil {
		t.Errorf("CheckChunks: %v", err)
	}
}

// TestUseStagedStoredDigest: staged bytes whose digest is stored already
// are not recorded again: the content keeps its own chunks and the staged
// ones are left for the store to drop.
func TestUseStagedStoredDigest(t *testing.T) {
	s := openStore(t)
	data := randomBytes(attachstore.ChunkSize+9, 5)
	digest := writeContent(t, s, data)
	st, _, err := stage(t, s, "tmp-again", data)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := useStaged(t, s, &couchdoc.Attachment{Name: "b"}, st, -1); err != nil || got != digest {
		t.Fatalf("UseStaged = %s, %v; want %s", got, err, digest)
	}
	if n := localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM att_content WHERE chunks IS NULL"); n != 1 {
		t.Errorf("%d contents under their own digest, want the 1 written first", n)
	}
	if n := localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM att_chunks WHERE digest = ?", "tmp-again"); n != 2 {
		t.Errorf("%d staged chunks left, want 2", n)
	}
}

// TestUseStagedRefused: staged bytes whose stated digest or length is not
// theirs are refused with ErrDigestMismatch, and staged chunks that went
// missing (or a key that has none) are an error; none records content.
func TestUseStagedRefused(t *testing.T) {
	s := openStore(t)
	data := randomBytes(2*attachstore.ChunkSize, 9)
	st, _, err := stage(t, s, "tmp-x", data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := useStaged(t, s, &couchdoc.Attachment{Name: "a", Digest: md5Of([]byte("other"))}, st, -1); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Errorf("UseStaged with another md5: %v, want ErrDigestMismatch", err)
	}
	if _, err := useStaged(t, s, &couchdoc.Attachment{Name: "a"}, st, st.Length+1); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Errorf("UseStaged with another length: %v, want ErrDigestMismatch", err)
	}
	unknown := &attachstore.Staged{Key: "tmp-unknown", Digest: st.Digest, Length: st.Length}
	if _, err := useStaged(t, s, &couchdoc.Attachment{Name: "a"}, unknown, -1); err == nil {
		t.Error("UseStaged of a key with no chunks succeeded")
	}
	if _, err := s.db.Exec("DELETE FROM att_chunks WHERE digest = ? AND idx = 1", st.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := useStaged(t, s, &couchdoc.Attachment{Name: "a"}, st, -1); err == nil {
		t.Error("UseStaged with a staged chunk gone succeeded")
	}
	if s.have(t, st.Digest) {
		t.Error("a refused UseStaged recorded the content")
	}
}

// digestingBody is a Body that says it sets its attachment's DataDigest
// when read to its end, as package wire's does: atEOF does it (or not).
type digestingBody struct {
	io.Reader
	atEOF func()
}

func (b digestingBody) SetsDataDigest() bool { return true }

func (b digestingBody) Read(p []byte) (n int, err error) {
	if n, err = b.Reader.Read(p); err == io.EOF {
		b.atEOF()
	}
	return n, err
}

// TestStageBodyDigest: Stage takes the digest of a body that sums its
// own bytes rather than summing them again, fails when such a body ends
// without one (a DataDigest set before the read is not taken for it), and
// passes on a body's read error.
func TestStageBodyDigest(t *testing.T) {
	s := openStore(t)
	write := func(fn func(attachstore.Tx) error) error {
		return s.update(t, func(tx *sql.Tx) error { return fn(tx) })
	}
	a := &couchdoc.Attachment{Name: "a", DataDigest: "md5-stale"}
	a.Body = digestingBody{bytes.NewReader([]byte("abc")), func() { a.DataDigest = "md5-from-body" }}
	st := &attachstore.Staged{Key: "tmp-1"}
	if err := attachstore.Stage(a, st, write); err != nil || st.Digest != "md5-from-body" || st.Length != 3 {
		t.Errorf("Stage = %+v, %v; want the body's digest and 3 bytes", st, err)
	}

	a = &couchdoc.Attachment{Name: "a", DataDigest: "md5-stale", Body: digestingBody{bytes.NewReader([]byte("abc")), func() {}}}
	if err := attachstore.Stage(a, &attachstore.Staged{Key: "tmp-2"}, write); err == nil {
		t.Error("Stage of a body that ended without its digest succeeded")
	}

	failure := errors.New("connection reset")
	a = &couchdoc.Attachment{Name: "a", Body: iotest.ErrReader(failure)}
	if err := attachstore.Stage(a, &attachstore.Staged{Key: "tmp-3"}, write); !errors.Is(err, failure) {
		t.Errorf("Stage of a failing body: %v, want its error", err)
	}
}
