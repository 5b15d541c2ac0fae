package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// Lazy attachments: a replication may bring an attachment's metadata
// (name, content type, length, digest, revpos, encoding) without its
// bytes. The store then keeps an att_content row with present = 0 and no
// chunks, and the revision's rev_atts row has missing = 1. Content is
// stored once per digest, so bytes that any revision holds are there for
// every revision naming that digest. Reads with attachment bodies give
// such an attachment as a stub marked NotDownloaded; OpenAttachment gives
// ErrAttachmentNotDownloaded. FillAttachment stores the bytes once
// fetched; EvictAttachment drops them again.

// BulkDocsLazy is BulkDocs with new_edits=false for a lazy replication: an
// attachment stub that names no attachment the store has is recorded with
// its metadata as not downloaded, instead of failing with ErrMissingStub.
// Such a stub must state its digest. Bytes with the same digest already
// stored (another document, an older revision) are used as they are.
func (db *DB) BulkDocsLazy(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	return db.bulkDocs(ctx, docs, false, true)
}

// absentAtt records a replicated stub's content as known but not present
// (unless that digest is stored) and returns it as a stored attachment.
func (w *wtx) absentAtt(name string, a *couchdoc.Attachment) (*storedAtt, error) {
	if a.Length < 0 || a.RevPos <= 0 {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "attachment stub %q needs its length and revpos", name)
	}
	if _, err := w.Exec(qInsertAbsent, a.Digest, a.Length); err != nil {
		return nil, fmt.Errorf("record attachment %q: %w", name, err)
	}
	var length int64
	var present bool
	if err := w.tx.QueryRowContext(w.ctx, "SELECT length, present FROM att_content WHERE digest = ?", a.Digest).Scan(&length, &present); err != nil {
		return nil, err
	}
	if length != a.Length {
		return nil, couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment stub %q: length %d, stored content of its digest has %d", name, a.Length, length)
	}
	ct := a.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	return &storedAtt{Name: name, ContentType: ct, Digest: a.Digest, Length: a.Length, RevPos: a.RevPos, Encoding: a.Encoding, Missing: !present}, nil
}

// AttachmentState is an attachment of a document's winning revision and
// whether the store holds its bytes.
type AttachmentState struct {
	// Rev is the winning revision that has the attachment.
	Rev string
	// Attachment is its metadata, as a stub (Encoding set as the source
	// stated it).
	Attachment *couchdoc.Attachment
	// Downloaded is false when the bytes are not in the store.
	Downloaded bool
}

// Attachment reports the state of attachment name of document id's
// winning revision: ErrNotFound when there is no such attachment.
func (db *DB) Attachment(ctx context.Context, id, name string) (*AttachmentState, error) {
	doc, err := db.Get(ctx, id, GetOptions{})
	if err != nil {
		return nil, err
	}
	a := doc.Attachments[name]
	if a == nil {
		return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment")
	}
	return &AttachmentState{Rev: doc.Rev, Attachment: a, Downloaded: !a.NotDownloaded}, nil
}

// FillAttachment stores the bytes of an attachment the store knows but
// lacks: body is read to its end (streamed into the store in small
// transactions) and must have the attachment's length and, unless its
// Encoding is "gzip" (CouchDB states that digest over the gzip bytes,
// which the caller checks), its md5 digest; otherwise nothing is stored
// and the error matches couchdoc.ErrDigestMismatch. Gzip-stated bytes are
// then kept under their own md5 digest, as an eager replication keeps
// them. Every revision naming the digest gets the bytes, and the
// documents that lacked them get a new sequence in the changes feed
// (same revisions): a push that failed them for the missing bytes sends
// them next time. Bytes already present make it a no-op (body is not
// read).
func (db *DB) FillAttachment(ctx context.Context, id, name string, body io.Reader) error {
	st, err := db.Attachment(ctx, id, name)
	if err != nil {
		return err
	}
	if st.Downloaded {
		return nil
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	a := st.Attachment
	in := &couchdoc.Attachment{Name: name, Body: body}
	s, err := db.stageOne(ctx, in)
	staged := map[*couchdoc.Attachment]*attachstore.Staged{}
	if s != nil {
		staged[in] = s
	}
	defer db.unstage(ctx, staged)
	if err != nil {
		return err
	}
	gz := a.Encoding == "gzip"
	if s.Length != a.Length || (!gz && s.Digest != a.Digest) {
		return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q of %q: got %d bytes, digest %s; want %d, %s", name, id, s.Length, s.Digest, a.Length, a.Digest)
	}
	return db.finishFill(ctx, a, in, s)
}

// finishFill makes checked bytes, staged as s, the content of a (a stub
// the store lacks), for every revision naming its digest, and drops a
// partial download of it (attach_partial.go).
func (db *DB) finishFill(ctx context.Context, a, in *couchdoc.Attachment, s *attachstore.Staged) error {
	return db.update(ctx, func(w *wtx) error {
		var present bool
		err := w.tx.QueryRowContext(ctx, "SELECT present FROM att_content WHERE digest = ?", a.Digest).Scan(&present)
		if errors.Is(err, sql.ErrNoRows) {
			return w.deletePartial(a.Digest, partKey(a.Digest)) // the revision went away meanwhile (purge, compaction)
		}
		if err != nil {
			return err
		}
		if !present {
			if err := w.fill(a, in, s); err != nil {
				return err
			}
		}
		return w.deletePartial(a.Digest, partKey(a.Digest))
	})
}

// fill is finishFill's work on content still absent.
func (w *wtx) fill(a, in *couchdoc.Attachment, s *attachstore.Staged) error {
	if err := w.reannounce(a.Digest); err != nil {
		return err
	}
	if _, _, err := attachstore.UseStaged(w, in, s, a.Length, false); err != nil {
		return err
	}
	if s.Digest == a.Digest {
		return nil
	}
	// Gzip-stated digest: the attachments move to our digest.
	if _, err := w.tx.ExecContext(w.ctx, "UPDATE rev_atts SET digest = ?, missing = 0, encoding = '' WHERE digest = ?", s.Digest, a.Digest); err != nil {
		return err
	}
	_, err := w.tx.ExecContext(w.ctx, "DELETE FROM att_content WHERE digest = ? AND present = 0", a.Digest)
	return err
}

// reannounce gives the documents with a revision lacking content digest
// a new sequence, their revisions unchanged: the changes feed lists them
// again, so a push that failed them for the missing bytes sends them
// next time, and listeners learn the bytes are here.
func (w *wtx) reannounce(digest string) error {
	rows, err := w.tx.QueryContext(w.ctx, `SELECT DISTINCT r.doc_id FROM rev_atts a JOIN revs r ON r.rev_row = a.rev_row
		WHERE a.digest = ? AND a.missing = 1`, digest)
	if err != nil {
		return err
	}
	ids, err := scanAll[int64](rows)
	if err != nil {
		return err
	}
	for _, id := range ids {
		w.seq++
		if _, err := w.tx.ExecContext(w.ctx, "UPDATE docs SET seq = ? WHERE doc_id = ?", w.seq, id); err != nil {
			return err
		}
		w.fed = true
	}
	return nil
}

// EvictAttachment drops the bytes of attachment name of document id's
// winning revision, keeping its metadata: reads then behave as after a
// lazy replication. The bytes stay while another attachment (any
// document, any revision) still holds the same digest. ErrNotFound when
// there is no such attachment; evicting twice is a no-op.
func (db *DB) EvictAttachment(ctx context.Context, id, name string) error {
	st, err := db.Attachment(ctx, id, name)
	if err != nil {
		return err
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	digest := st.Attachment.Digest
	return db.update(ctx, func(w *wtx) error {
		// Every revision of this document naming the digest lets it go.
		_, err := w.tx.ExecContext(ctx, `UPDATE rev_atts SET missing = 1 WHERE digest = ? AND rev_row IN
			(SELECT r.rev_row FROM revs r JOIN docs d ON d.doc_id = r.doc_id WHERE d.id = ?)`, digest, id)
		if err != nil {
			return err
		}
		var held int
		if err := w.tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM rev_atts WHERE digest = ? AND missing = 0", digest).Scan(&held); err != nil {
			return err
		}
		if held > 0 {
			return nil
		}
		if _, err := w.Exec(qDeleteContentChunks, digest); err != nil {
			return err
		}
		_, err = w.tx.ExecContext(ctx, "UPDATE att_content SET present = 0, chunks = NULL WHERE digest = ?", digest)
		return err
	})
}
