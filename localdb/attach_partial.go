package localdb

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// Resumable downloads: DownloadAttachment streams a missing body into
// the store in small transactions, each storing whole chunks together
// with an att_partial row (bytes so far, md5 state). A download cut short
// (network, crash, the app killed) keeps those bytes: the next
// DownloadAttachment, in this process or after reopening the file, asks
// its source for the rest only. The digest is checked over all the bytes
// at the end; a mismatch discards them and stores nothing. A partial
// download of content the store no longer lacks (the bytes arrived by
// another way, the document moved on to other content and was compacted)
// is dropped by the next download and by Compact.

// partKey is the att_chunks key of content digest while partial.
func partKey(digest string) string { return "part-" + digest }

// DownloadAttachment stores the bytes of attachment name of document
// id's winning revision, which the store knows but lacks, resuming a
// download kept from before. open is asked for the bytes from offset on
// (0 when nothing was kept) and must give exactly those, to the
// attachment's end (e.g. an HTTP Range request, or the whole body with
// the first offset bytes skipped). A read error keeps the whole chunks
// read so far and is returned (errors.Is sees the reader's error). At
// the end, the bytes must have the attachment's length and, unless its
// Encoding is "gzip" (see FillAttachment), its md5 digest: otherwise
// they are all discarded and the error matches couchdoc.ErrDigestMismatch.
// Bytes already here make it a no-op (open is not called). Downloads of
// the same content wait for each other. Memory: one 1 MiB buffer.
func (db *DB) DownloadAttachment(ctx context.Context, id, name string, open func(ctx context.Context, offset int64) (io.ReadCloser, error)) error {
	for {
		st, err := db.Attachment(ctx, id, name)
		if err != nil || st.Downloaded {
			return err
		}
		st.Attachment.Name = name
		release, err := db.lockDownload(ctx, st.Attachment.Digest)
		if err != nil {
			return err
		}
		if release == nil {
			continue // another download of it ended: look again
		}
		err = db.download(ctx, id, name, st.Attachment, open)
		release()
		return err
	}
}

// lockDownload takes the in-process lock of content digest's download. It
// returns nil (and no error) after waiting for another holder.
func (db *DB) lockDownload(ctx context.Context, digest string) (func(), error) {
	db.smu.Lock()
	if ch, busy := db.downloads[digest]; busy {
		db.smu.Unlock()
		select {
		case <-ch:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if db.downloads == nil {
		db.downloads = make(map[string]chan struct{})
	}
	ch := make(chan struct{})
	db.downloads[digest] = ch
	db.smu.Unlock()
	return func() {
		db.smu.Lock()
		delete(db.downloads, digest)
		db.smu.Unlock()
		close(ch)
	}, nil
}

// partial is a download in progress.
type partial struct {
	digest, key string
	length      int64
	h           hash.Hash
}

func (db *DB) download(ctx context.Context, id, name string, a *couchdoc.Attachment, open func(context.Context, int64) (io.ReadCloser, error)) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	p, err := db.loadPartial(ctx, a)
	if err != nil {
		return err
	}
	var body io.ReadCloser
	if p.length < a.Length {
		if body, err = open(ctx, p.length); err != nil {
			return err
		}
		defer body.Close()
		if err := db.appendPartial(ctx, p, a, body); err != nil {
			return err
		}
	}
	got := attachstore.MD5Digest(p.h)
	if p.length != a.Length || (a.Encoding != "gzip" && got != a.Digest) {
		db.dropPartial(ctx, p)
		return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q of %q: got %d bytes, digest %s; want %d, %s", name, id, p.length, got, a.Length, a.Digest)
	}
	in := &couchdoc.Attachment{Name: name}
	return db.finishFill(ctx, a, in, &attachstore.Staged{Key: p.key, Digest: got, Length: p.length})
}

// loadPartial reads the kept download of a's content, or starts one. It
// first drops the downloads of content the store does not lack any more,
// and a kept download that does not add up (then it starts again).
func (db *DB) loadPartial(ctx context.Context, a *couchdoc.Attachment) (*partial, error) {
	p := &partial{digest: a.Digest, key: partKey(a.Digest), h: md5.New()}
	err := db.update(ctx, func(w *wtx) error {
		if err := w.dropStalePartials(); err != nil {
			return err
		}
		var state []byte
		err := w.tx.QueryRowContext(ctx, "SELECT length, hash FROM att_partial WHERE digest = ?", a.Digest).Scan(&p.length, &state)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var stored, chunks int64
		if err := w.tx.QueryRowContext(ctx, "SELECT COALESCE(SUM(LENGTH(data)), 0), COUNT(*) FROM att_chunks WHERE digest = ?", p.key).Scan(&stored, &chunks); err != nil {
			return err
		}
		u, ok := p.h.(encoding.BinaryUnmarshaler)
		if stored == p.length && p.length <= a.Length && chunks == p.length/attachstore.ChunkSize && ok && u.UnmarshalBinary(state) == nil {
			return nil
		}
		p.length, p.h = 0, md5.New()
		return w.deletePartial(p.digest, p.key)
	})
	return p, err
}

// appendPartial stores body's bytes after p's, whole chunks at a time in
// small transactions, each recording the new length and md5 state.
func (db *DB) appendPartial(ctx context.Context, p *partial, a *couchdoc.Attachment, body io.Reader) error {
	buf := make([]byte, attachstore.StageChunks*attachstore.ChunkSize)
	for {
		k, rerr := io.ReadFull(body, buf)
		if p.length+int64(k) > a.Length {
			db.dropPartial(ctx, p)
			return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: more than its %d bytes", a.Name, a.Length)
		}
		end := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if end && p.length+int64(k) != a.Length {
			rerr = fmt.Errorf("attachment %q: body ended at byte %d of %d: %w", a.Name, p.length+int64(k), a.Length, io.ErrUnexpectedEOF)
			end = false
		}
		keep := k
		if !end { // a cut: the last partial chunk is read again next time
			keep -= k % attachstore.ChunkSize
		}
		if keep > 0 {
			if err := db.savePartial(ctx, p, buf[:keep]); err != nil {
				return err
			}
		}
		if end {
			return nil
		}
		if errors.Is(rerr, couchdoc.ErrDigestMismatch) { // the source is wrong
			db.dropPartial(ctx, p)
		}
		if rerr != nil {
			return fmt.Errorf("read attachment %q: %w", a.Name, rerr)
		}
	}
}

// savePartial stores data (whole chunks, or the last bytes) after p's
// bytes and records the download's new length and md5 state, in one
// transaction.
func (db *DB) savePartial(ctx context.Context, p *partial, data []byte) error {
	h := cloneHash(p.h)
	h.Write(data)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return err
	}
	err = db.update(ctx, func(w *wtx) error {
		idx := p.length / attachstore.ChunkSize
		for off := 0; off < len(data); off += attachstore.ChunkSize {
			if err := attachstore.InsertChunk(w, p.key, idx, data[off:min(off+attachstore.ChunkSize, len(data))]); err != nil {
				return fmt.Errorf("store attachment: %w", err)
			}
			idx++
		}
		_, err := w.tx.ExecContext(ctx, `INSERT INTO att_partial (digest, key, length, hash) VALUES (?, ?, ?, ?)
			ON CONFLICT (digest) DO UPDATE SET length = excluded.length, hash = excluded.hash`, p.digest, p.key, p.length+int64(len(data)), state)
		return err
	})
	if err != nil {
		return err
	}
	p.h, p.length = h, p.length+int64(len(data))
	return nil
}

// cloneHash copies an md5 state (through its binary form).
func cloneHash(h hash.Hash) hash.Hash {
	state, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	c := md5.New()
	_ = c.(encoding.BinaryUnmarshaler).UnmarshalBinary(state)
	return c
}

// dropPartial discards a download's bytes (best effort: the next download
// or Compact drops what is left).
func (db *DB) dropPartial(ctx context.Context, p *partial) {
	db.update(context.WithoutCancel(ctx), func(w *wtx) error { return w.deletePartial(p.digest, p.key) })
}

func (w *wtx) deletePartial(digest, key string) error {
	if _, err := w.Exec(qDeleteChunks, key); err != nil {
		return err
	}
	_, err := w.tx.ExecContext(w.ctx, "DELETE FROM att_partial WHERE digest = ?", digest)
	return err
}

// dropStalePartials drops the downloads of content the store no longer
// lacks (present, or gone).
func (w *wtx) dropStalePartials() error {
	rows, err := w.tx.QueryContext(w.ctx, `SELECT digest FROM att_partial WHERE digest NOT IN
		(SELECT digest FROM att_content WHERE present = 0)`)
	if err != nil {
		return err
	}
	stale, err := scanAll[string](rows)
	if err != nil {
		return err
	}
	for _, d := range stale {
		if err := w.deletePartial(d, partKey(d)); err != nil {
			return err
		}
	}
	return nil
}

// PartialDownload reports how many bytes of attachment name of document
// id's winning revision a kept download holds (0 when none).
func (db *DB) PartialDownload(ctx context.Context, id, name string) (int64, error) {
	st, err := db.Attachment(ctx, id, name)
	if err != nil || st.Downloaded {
		return 0, err
	}
	var n int64
	err = db.update(ctx, func(w *wtx) error {
		err := w.tx.QueryRowContext(ctx, "SELECT length FROM att_partial WHERE digest = ?", st.Attachment.Digest).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	})
	return n, err
}
