// Package wire holds the CouchDB wire formats that Settee's HTTP client
// (sync/couch) and HTTP server (server/) share: multipart/related and
// multipart/mixed documents with streamed attachments, changes feeds (normal
// and continuous), and the JSON shapes of _revs_diff, _bulk_get, _bulk_docs
// and error bodies.
//
// Everything streams: readers hand out one document or one changes row at a
// time, and attachment bodies are io.Readers that are only valid inside the
// callback that received them. Nothing reads a whole feed or a whole
// attachment into memory.
//
// Errors: input that is not the expected format is a *MalformedError, which
// matches ErrMalformed and carries a 400 status (a server answers 400
// bad_request) without matching any couchdoc sentinel. Read
// errors of the underlying stream (truncation, timeouts) are passed through
// wrapped, so errors.Is(err, io.ErrUnexpectedEOF) and net timeouts still
// match. Attachment bytes that do not match their declared length or md5
// digest give couchdoc.ErrDigestMismatch.
package wire

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/settee/settee/couchdoc"
)

// ErrMalformed matches every *MalformedError, whatever payload it is about.
var ErrMalformed = errors.New("malformed CouchDB wire data")

// ErrNotCouchDB matches a *MalformedError with Foreign set: an answer
// that is whole and well formed but not the shape CouchDB gives (a URL
// that names no database, another kind of server). Asking again gets the
// same answer.
var ErrNotCouchDB = errors.New("not a CouchDB answer")

// MalformedError reports a payload that does not parse as the CouchDB wire
// format it should be. It matches ErrMalformed, unwraps to its cause, and
// errors.As finds a 400 bad_request *couchdoc.Error in it (so a server
// answers 400), which is none of couchdoc's sentinels: a garbled answer is
// not couchdoc.ErrBadRequest, the peer's refusal of a request.
type MalformedError struct {
	// What names the payload, such as "changes feed" or "multipart part".
	What string
	// Err is the cause (a *json.SyntaxError, io.ErrUnexpectedEOF, ...).
	Err error
	// Foreign marks a payload that parsed but is not CouchDB's
	// (ErrNotCouchDB), as opposed to one damaged or cut short.
	Foreign bool
}

func (e *MalformedError) Error() string {
	if e.Err == nil {
		return "malformed " + e.What
	}
	return "malformed " + e.What + ": " + e.Err.Error()
}

// Unwrap returns ErrMalformed, a 400 bad_request *couchdoc.Error of its
// own identity, ErrNotCouchDB when Foreign, and the cause.
func (e *MalformedError) Unwrap() []error {
	errs := []error{ErrMalformed, couchdoc.Errorf(errMalformed400, "malformed %s", e.What)}
	if e.Foreign {
		errs = append(errs, ErrNotCouchDB)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// errMalformed400 is the CouchDB error of a malformed payload: a 400
// bad_request that matches no couchdoc sentinel.
var errMalformed400 = &couchdoc.Error{Status: http.StatusBadRequest, Name: "bad_request", Reason: "malformed"}

func malformed(what string, err error) error {
	return &MalformedError{What: what, Err: err}
}

func malformedf(what, format string, args ...any) error {
	return &MalformedError{What: what, Err: fmt.Errorf(format, args...)}
}

// RevError is the per-revision error of an open_revs or _bulk_get answer
// (a missing revision, a forbidden document, ...). It names the revision
// when the peer did, and unwraps to a *couchdoc.Error, so
// errors.Is(err, couchdoc.ErrNotFound) matches a missing revision.
type RevError struct {
	ID  string // may be empty: CouchDB omits it from multipart error parts
	Rev string
	Err *couchdoc.Error
	// Refused is set when the peer sent the document and this side
	// refuses it (couchdoc.ParseDoc's error): the peer reported nothing.
	Refused bool
}

func (e *RevError) Error() string {
	s := e.Err.Error()
	if e.ID != "" || e.Rev != "" {
		s = fmt.Sprintf("%s (doc %q rev %q)", s, e.ID, e.Rev)
	}
	return s
}

// Unwrap returns the CouchDB error.
func (e *RevError) Unwrap() error { return e.Err }

// missingRev is the error of a {"missing": rev} answer.
func missingRev(id, rev string) *RevError {
	return &RevError{ID: id, Rev: rev, Err: couchdoc.Errorf(couchdoc.ErrNotFound, "missing")}
}
