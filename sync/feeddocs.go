package sync

import (
	"errors"

	"github.com/settee/settee/couchdoc"
)

// The first pass into an empty target reads the source's changes feed with
// include_docs=true. A row whose only leaf is a first-generation revision
// without attachments then carries the whole revision (its history is its
// own id), so it goes to the writer without a _bulk_get: on an initial sync
// most documents are such, and fetching each one again is most of the
// source's work. Couchbase Lite 1.x fetched first-generation revisions in
// bulk for the same reason. Rows that do not qualify are fetched as usual;
// their bodies were transferred twice, so the fast path turns itself off
// for the rest of the session when less than half of a batch qualifies, and
// when the source refuses a row as too large.

// feedDocsBytes bounds the document bodies held from one changes batch;
// rows past it are fetched as usual.
const feedDocsBytes = 4 << 20

// feedDoc returns the revision a changes row carries in full, or nil.
func feedDoc(c *couchdoc.Change) *couchdoc.Doc {
	if len(c.Changes) != 1 || len(c.Doc) == 0 || c.Doc[0] != '{' {
		return nil
	}
	rev, err := couchdoc.CanonRev(c.Changes[0].Rev) // as ParseDoc gives _rev
	if err != nil {
		return nil
	}
	gen, hash, _ := couchdoc.ParseRev(rev)
	if gen != 1 {
		return nil
	}
	doc, err := couchdoc.ParseDoc(c.Doc)
	if err != nil || doc.ID != c.ID || doc.Rev != rev || len(doc.Attachments) > 0 {
		return nil
	}
	if doc.Revisions != nil && (doc.Revisions.Start != 1 || len(doc.Revisions.IDs) != 1 || doc.Revisions.IDs[0] != hash) {
		return nil
	}
	doc.Revisions = &couchdoc.Revisions{Start: 1, IDs: []string{hash}}
	return doc
}

// feedDocsRefused tells an error that include_docs caused (a row too large
// to read), after which the feed is read again without it.
func feedDocsRefused(err error) bool {
	return errors.Is(err, couchdoc.ErrTooLarge)
}
