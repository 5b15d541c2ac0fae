package mobile

import (
	"github.com/settee/settee/sync/localpeer"
)

// IsAttachmentDownloaded reports whether the store holds the body of
// attachment name of the document's winning revision: false after a
// lazy pull (ReplicatorConfig.Attachments) or EvictAttachment, until
// FetchAttachment. Reading a body that is not downloaded fails with
// CouchDB's not_found, "attachment body not downloaded".
func (d *Database) IsAttachmentDownloaded(docID, name string) (ok bool, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return false, err
	}
	st, err := d.db.Attachment(d.ctx, docID, name)
	if err != nil {
		return false, err
	}
	return st.Downloaded, nil
}

// FetchAttachment downloads the body of attachment name of the
// document's winning revision from the remote database of replicator
// (its URL and credentials), streamed into the store; a cut transfer is
// resumed, and bytes that do not match the attachment's length and
// digest are refused. It blocks until done: call it off the UI thread. A
// body already here is not downloaded again.
func (d *Database) FetchAttachment(replicator *Replicator, docID, name string) (err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return err
	}
	if replicator == nil {
		return badRequest("a replicator is required")
	}
	return localpeer.FetchAttachment(d.ctx, replicator.remote, d.db, docID, name)
}

// EvictAttachment drops the local body of attachment name of the
// document's winning revision, keeping its metadata, to free space; the
// bytes stay while another attachment holds the same content.
// FetchAttachment brings them back.
func (d *Database) EvictAttachment(docID, name string) (err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return err
	}
	return d.db.EvictAttachment(d.ctx, docID, name)
}
