package mobile

import (
	"errors"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// PutAttachment adds or replaces the attachment name of document docID,
// as CouchDB's PUT /{db}/{doc}/{name}?rev=rev: rev is the document's
// current revision, or "" to create the document with only this
// attachment. It returns the document's new revision. For large
// attachments use PutAttachmentFrom, which streams.
func (d *Database) PutAttachment(docID, rev, name, contentType string, data []byte) (newRev string, err error) {
	defer recoverTo(&err)
	if data == nil {
		data = []byte{}
	}
	return d.putAttachment(docID, rev, &couchdoc.Attachment{Name: name, ContentType: contentType, Data: data})
}

// AttachmentSource is implemented by the app to stream an attachment's
// bytes into the store (a file, a camera stream). Read returns up to n
// bytes; an empty (or null) array means the end. An error aborts the write,
// which then leaves the document unchanged. It is called on the thread
// that called PutAttachmentFrom.
type AttachmentSource interface {
	Read(n int64) ([]byte, error)
}

// PutAttachmentFrom is PutAttachment with the bytes read from src, in
// chunks, never holding the whole attachment in memory.
func (d *Database) PutAttachmentFrom(docID, rev, name, contentType string, src AttachmentSource) (newRev string, err error) {
	defer recoverTo(&err)
	if src == nil {
		return "", badRequest("nil attachment source")
	}
	return d.putAttachment(docID, rev, &couchdoc.Attachment{Name: name, ContentType: contentType, Body: &sourceReader{src: src}})
}

func (d *Database) putAttachment(docID, rev string, att *couchdoc.Attachment) (string, error) {
	if err := d.checkWrite(); err != nil {
		return "", err
	}
	if att.Name == "" {
		return "", badRequest("attachment name is empty")
	}
	doc := &couchdoc.Doc{ID: docID}
	if rev != "" {
		cur, err := d.db.Get(d.ctx, docID, localdb.GetOptions{Rev: rev})
		if err != nil {
			return "", err
		}
		doc = cur
	}
	if doc.Attachments == nil {
		doc.Attachments = map[string]*couchdoc.Attachment{}
	}
	doc.Attachments[att.Name] = att
	return d.db.Put(d.ctx, doc)
}

// DeleteAttachment removes the attachment name from the document's
// revision rev and returns the new revision.
func (d *Database) DeleteAttachment(docID, rev, name string) (newRev string, err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return "", err
	}
	doc, err := d.db.Get(d.ctx, docID, localdb.GetOptions{Rev: rev})
	if err != nil {
		return "", err
	}
	if doc.Attachments[name] == nil {
		return "", couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment")
	}
	delete(doc.Attachments, name)
	return d.db.Put(d.ctx, doc)
}

// GetAttachment returns an attachment's bytes; rev "" reads the winning
// revision. For large attachments use OpenAttachment, which streams.
func (d *Database) GetAttachment(docID, rev, name string) (data []byte, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return nil, err
	}
	_, rc, err := d.db.OpenAttachment(d.ctx, docID, rev, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err = io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// OpenAttachment opens an attachment for reading in chunks; rev "" reads
// the winning revision. Close the reader when done.
func (d *Database) OpenAttachment(docID, rev, name string) (r *AttachmentReader, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return nil, err
	}
	att, rc, err := d.db.OpenAttachment(d.ctx, docID, rev, name)
	if err != nil {
		return nil, err
	}
	return &AttachmentReader{rc: rc, att: att}, nil
}

// AttachmentReader streams one attachment's bytes to the app. It is not
// safe for concurrent use.
type AttachmentReader struct {
	rc  io.ReadCloser
	att *couchdoc.Attachment
}

// ContentType returns the attachment's MIME type.
func (r *AttachmentReader) ContentType() string {
	defer recoverLog("ContentType")
	return r.meta().ContentType
}

// Length returns the attachment's size in bytes.
func (r *AttachmentReader) Length() int64 {
	defer recoverLog("Length")
	return r.meta().Length
}

// Digest returns CouchDB's "md5-<base64>" digest of the bytes.
func (r *AttachmentReader) Digest() string {
	defer recoverLog("Digest")
	return r.meta().Digest
}

// meta returns the attachment's metadata, empty for a reader the app
// constructed itself.
func (r *AttachmentReader) meta() *couchdoc.Attachment {
	if r.att == nil {
		return &couchdoc.Attachment{}
	}
	return r.att
}

// Read returns the next bytes, at most n (n <= 0 picks 64 KiB); an empty
// array means the end.
func (r *AttachmentReader) Read(n int64) (data []byte, err error) {
	defer recoverTo(&err)
	if r.rc == nil {
		return nil, errors.New("settee: attachment reader is closed")
	}
	if n <= 0 {
		n = 64 << 10
	}
	if n > 16<<20 {
		n = 16 << 20
	}
	buf := make([]byte, n)
	k, err := io.ReadFull(r.rc, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return buf[:k], err
}

// Close releases the reader. Closing twice is a no-op.
func (r *AttachmentReader) Close() (err error) {
	defer recoverTo(&err)
	if r.rc == nil {
		return nil
	}
	err = r.rc.Close()
	r.rc = nil
	return err
}

// sourceReader adapts an app's AttachmentSource to io.Reader.
type sourceReader struct {
	src  AttachmentSource
	rest []byte
	eof  bool
}

func (s *sourceReader) Read(p []byte) (int, error) {
	for len(s.rest) == 0 {
		if s.eof {
			return 0, io.EOF
		}
		b, err := s.src.Read(int64(len(p)))
		if err != nil {
			return 0, err
		}
		if len(b) == 0 {
			s.eof = true
			return 0, io.EOF
		}
		s.rest = b
	}
	n := copy(p, s.rest)
	s.rest = s.rest[n:]
	return n, nil
}
