package failure

import (
	"errors"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// Class sorts a failure by what can fix it. The CLI's exit codes and the
// mobile layer's ErrorClass are both made from it.
type Class int

const (
	// Failed: nothing a caller can do is known to fix it (a local I/O
	// error, an answer that is not CouchDB's, a bug).
	Failed Class = iota
	// BadInput: the request itself is wrong (malformed JSON, an illegal
	// id or name, a document CouchDB would refuse): fix it and ask again.
	BadInput
	// NotFound: the database, document, revision or attachment is missing.
	NotFound
	// Unauthorized: the credentials are missing, wrong or not enough
	// (401, 403): only new credentials fix it.
	Unauthorized
	// Conflict: the write does not name the current revision.
	Conflict
	// Retry: unreachable or failing for now (Transient, Unreachable):
	// asking again may succeed; a refused certificate is among them, as
	// the peer could not be talked to.
	Retry
)

// String names the class as the mobile layer's ErrorClass gives it.
func (c Class) String() string {
	switch c {
	case BadInput:
		return "bad_input"
	case NotFound:
		return "not_found"
	case Unauthorized:
		return "unauthorized"
	case Conflict:
		return "conflict"
	case Retry:
		return "retry"
	}
	return "failed"
}

// Classify sorts err into its Class. A peer's answer that does not parse
// carries a 400 status but is not the caller's bad input: it is Retry
// when it may be damage on the way (Transient), Failed when it is whole
// but not CouchDB's (wire.ErrNotCouchDB). A nil error is Failed.
func Classify(err error) Class {
	switch {
	case err == nil:
		return Failed
	case Auth(err):
		return Unauthorized
	case errors.Is(err, couchdoc.ErrNotFound), errors.Is(err, couchdoc.ErrAttachmentNotDownloaded):
		return NotFound
	case errors.Is(err, couchdoc.ErrConflict):
		return Conflict
	case BadCertificate(err):
		// No retry makes a certificate trusted: the fix is an argument
		// (--ca-file, or the app's trust store).
		return BadInput
	case Transient(err), Unreachable(err):
		return Retry
	case errors.Is(err, wire.ErrMalformed), errors.Is(err, couchdoc.ErrDigestMismatch):
		return Failed
	}
	switch couchdoc.StatusOf(err) {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return BadInput
	}
	return Failed
}
