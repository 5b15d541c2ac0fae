package attachstore

import (
	"crypto/md5"
	"fmt"
	"hash"
	"io"

	"github.com/settee/settee/couchdoc"
)

// Streamed attachment bodies (Attachment.Body) are read into the store
// before their document's transaction, in small transactions of their own
// under a temporary key: a slow upload then never holds the single writer
// for long. The document's transaction checks the digest and length and
// records the content with the key its chunks are under (att_content.chunks)
// or, when that content is already stored, leaves them to be dropped.
// Renaming the chunks to the digest instead made SQLite rewrite every byte,
// inside the document's savepoint, whose statement journal held a copy of
// each page in memory. Whatever is left under a temporary key afterwards
// and not kept by content (a refused document, a failed batch) is deleted
// by the store; a crash leaves chunks that its compaction removes.

// StageChunks is how many chunks one staging transaction writes: the
// memory a streamed body costs.
const StageChunks = 4

// Staged is one streamed body, stored under Key.
type Staged struct {
	Key    string
	Digest string
	Length int64
}

// Stage streams a's Body into the store under s.Key, StageChunks chunks
// per transaction run by write, and sets s's digest and length (so far,
// on an error).
func Stage(a *couchdoc.Attachment, s *Staged, write func(fn func(t Tx) error) error) error {
	// A body that hashes itself as it is read (package wire's) leaves its
	// md5 in DataDigest at the end: no second md5 here.
	var h hash.Hash
	if d, ok := a.Body.(dataDigester); !ok || !d.SetsDataDigest() {
		h = md5.New()
	} else {
		a.DataDigest = "" // set anew by this read
	}
	buf := make([]byte, StageChunks*ChunkSize)
	idx := 0
	for {
		k, rerr := io.ReadFull(a.Body, buf)
		if k > 0 {
			if h != nil {
				h.Write(buf[:k])
			}
			s.Length += int64(k)
			err := write(func(t Tx) error {
				for off := 0; off < k; off += ChunkSize {
					if err := InsertChunk(t, s.Key, int64(idx), buf[off:min(off+ChunkSize, k)]); err != nil {
						return fmt.Errorf("store attachment %q: %w", a.Name, err)
					}
					idx++
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("read attachment %q: %w", a.Name, rerr)
		}
	}
	if h == nil {
		if s.Digest = a.DataDigest; s.Digest == "" {
			return fmt.Errorf("localdb: attachment %q: its body ended without its digest", a.Name)
		}
		return nil
	}
	s.Digest = MD5Digest(h)
	return nil
}

// dataDigester is a Body that sets its attachment's DataDigest when read
// to its end (see couchdoc.Attachment.DataDigest).
type dataDigester interface{ SetsDataDigest() bool }

// UseStaged finishes a staged body inside the document's transaction:
// checked as WriteData checks inline bytes, it becomes the content of its
// digest unless that is stored already (the staged copy is then left to
// be dropped).
func UseStaged(t Tx, a *couchdoc.Attachment, s *Staged, wantLen int64, strict bool) (string, int64, error) {
	if !CheckDigest(a.Digest, s.Digest, strict) || (wantLen >= 0 && wantLen != s.Length) {
		return "", 0, couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: digest or length does not match its data", a.Name)
	}
	ok, err := HaveContent(t, s.Digest)
	if err != nil || ok {
		return s.Digest, s.Length, err
	}
	key := s.Key
	if s.Length == 0 {
		_, err = t.Exec(qInsertEmptyChunk, s.Digest)
		key = ""
	} else {
		// Every staged chunk must still be there.
		var n int64
		if err = t.QueryRow(qCountChunks, s.Key).Scan(&n); err == nil {
			if want := (s.Length + ChunkSize - 1) / ChunkSize; n != want {
				err = fmt.Errorf("localdb: attachment %q: %d of %d staged chunks found", a.Name, n, want)
			}
		}
	}
	if err != nil {
		return "", 0, err
	}
	return s.Digest, s.Length, InsertContent(t, s.Digest, s.Length, key)
}
