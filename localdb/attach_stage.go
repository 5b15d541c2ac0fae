package localdb

import (
	"context"
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
// and not kept by content (a refused document, a failed batch) is deleted;
// a crash leaves chunks that Compact removes.

// stageChunks is how many chunks one staging transaction writes: the
// memory a streamed body costs.
const stageChunks = 4

// stagedContent is one streamed body, stored under key.
type stagedContent struct {
	key    string
	digest string
	length int64
}

// stage streams the Body of every attachment of docs into the store.
func (db *DB) stage(ctx context.Context, docs []*couchdoc.Doc) (map[*couchdoc.Attachment]*stagedContent, error) {
	var staged map[*couchdoc.Attachment]*stagedContent
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, a := range d.Attachments {
			if a == nil || a.Stub || a.Body == nil {
				continue
			}
			if staged == nil {
				staged = make(map[*couchdoc.Attachment]*stagedContent)
			}
			s, err := db.stageOne(ctx, a)
			if s != nil {
				staged[a] = s
			}
			if err != nil {
				db.unstage(ctx, staged)
				return nil, err
			}
		}
	}
	return staged, nil
}

func (db *DB) stageOne(ctx context.Context, a *couchdoc.Attachment) (*stagedContent, error) {
	s := &stagedContent{key: "tmp-" + newUUID()}
	db.smu.Lock()
	db.staging[s.key] = true // Compact leaves these chunks alone
	db.smu.Unlock()
	// A body that hashes itself as it is read (package wire's) leaves its
	// md5 in DataDigest at the end: no second md5 here.
	var h hash.Hash
	if d, ok := a.Body.(dataDigester); !ok || !d.SetsDataDigest() {
		h = md5.New()
	} else {
		a.DataDigest = "" // set anew by this read
	}
	buf := make([]byte, stageChunks*chunkSize)
	idx := 0
	for {
		k, rerr := io.ReadFull(a.Body, buf)
		if k > 0 {
			if h != nil {
				h.Write(buf[:k])
			}
			s.length += int64(k)
			err := db.update(ctx, func(w *wtx) error {
				for off := 0; off < k; off += chunkSize {
					if err := w.insertChunk(s.key, int64(idx), buf[off:min(off+chunkSize, k)]); err != nil {
						return fmt.Errorf("store attachment %q: %w", a.Name, err)
					}
					idx++
				}
				return nil
			})
			if err != nil {
				return s, err
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			return s, fmt.Errorf("read attachment %q: %w", a.Name, rerr)
		}
	}
	if h == nil {
		if s.digest = a.DataDigest; s.digest == "" {
			return s, fmt.Errorf("localdb: attachment %q: its body ended without its digest", a.Name)
		}
		return s, nil
	}
	s.digest = md5Digest(h)
	return s, nil
}

// dataDigester is a Body that sets its attachment's DataDigest when read
// to its end (see couchdoc.Attachment.DataDigest).
type dataDigester interface{ SetsDataDigest() bool }

// unstage deletes whatever is still stored under the staged keys, except
// the chunks that content kept.
func (db *DB) unstage(ctx context.Context, staged map[*couchdoc.Attachment]*stagedContent) {
	if len(staged) == 0 {
		return
	}
	// Best effort even when ctx is done; Compact removes leftovers.
	db.update(context.WithoutCancel(ctx), func(w *wtx) error {
		for _, s := range staged {
			if _, err := w.Exec(qDeleteChunks, s.key); err != nil {
				return err
			}
		}
		return nil
	})
	db.smu.Lock()
	for _, s := range staged {
		delete(db.staging, s.key)
	}
	db.smu.Unlock()
}

// stagingKeys lists the temporary keys of the uploads in flight.
func (db *DB) stagingKeys() []any {
	db.smu.Lock()
	defer db.smu.Unlock()
	keys := make([]any, 0, len(db.staging))
	for k := range db.staging {
		keys = append(keys, k)
	}
	return keys
}

// useStaged finishes a staged body inside the document's transaction.
func (w *wtx) useStaged(a *couchdoc.Attachment, s *stagedContent, wantLen int64, strict bool) (string, int64, error) {
	if !checkDigest(a.Digest, s.digest, strict) || (wantLen >= 0 && wantLen != s.length) {
		return "", 0, couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: digest or length does not match its data", a.Name)
	}
	ok, err := w.haveContent(s.digest)
	if err != nil || ok {
		return s.digest, s.length, err // the staged copy is dropped by unstage
	}
	key := s.key
	if s.length == 0 {
		_, err = w.Exec(qInsertEmptyChunk, s.digest)
		key = ""
	} else {
		// Every staged chunk must still be there.
		var n int64
		if err = w.QueryRow(qCountChunks, s.key).Scan(&n); err == nil {
			if want := (s.length + chunkSize - 1) / chunkSize; n != want {
				err = fmt.Errorf("localdb: attachment %q: %d of %d staged chunks found", a.Name, n, want)
			}
		}
	}
	if err != nil {
		return "", 0, err
	}
	return s.digest, s.length, w.insertContent(s.digest, s.length, key)
}
