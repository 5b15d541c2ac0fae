package couchdoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is a CouchDB error: the error name and reason of CouchDB's error
// body and the HTTP status that goes with it.
//
// Each sentinel below is its own identity: errors.Is(err, ErrNotFound)
// holds for ErrNotFound itself, for errors made from it with Errorf, and
// for errors read from a peer's answer (FromBody) whose name and status
// are ErrNotFound's. Sentinels that share a wire name keep apart:
// ErrDigestMismatch is answered as a 400 bad_request, yet a bad_request
// from a peer is ErrBadRequest, never ErrDigestMismatch, and an
// ErrDigestMismatch is not ErrBadRequest. Any other *Error matches only
// itself.
type Error struct {
	Status int
	Name   string
	Reason string
	// ReasonJSON is the reason as CouchDB answers it when it is not a
	// string (an object a validate_doc_update throws); Reason is then its
	// JSON text.
	ReasonJSON json.RawMessage
	// Ref is the "ref" number CouchDB adds to some errors (of its query
	// servers, of view range checks); 0 for none.
	Ref int64
	// Err is an underlying cause, if any.
	Err error
	// kind is the sentinel this error was made from (nil: none).
	kind *Error
}

// Error formats the error as "name: reason".
func (e *Error) Error() string {
	if e.Reason == "" {
		return e.Name
	}
	return e.Name + ": " + e.Reason
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether e and target are the same error or made from the same
// sentinel.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e.identity() == t.identity()
}

// identity is the sentinel e was made from, else e itself.
func (e *Error) identity() *Error {
	if e.kind != nil {
		return e.kind
	}
	return e
}

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotFound: the document, revision, attachment or database is missing.
	ErrNotFound = &Error{Status: http.StatusNotFound, Name: "not_found", Reason: "missing"}
	// ErrConflict: the edit does not name the current leaf it replaces.
	ErrConflict = &Error{Status: http.StatusConflict, Name: "conflict", Reason: "Document update conflict."}
	// ErrBadRequest: malformed input (JSON, ids, revs, parameters).
	ErrBadRequest = &Error{Status: http.StatusBadRequest, Name: "bad_request", Reason: "bad request"}
	// ErrIllegalDocID: an id CouchDB refuses: empty, not UTF-8, or
	// reserved (starting with '_' but not _design/NAME or _local/NAME).
	ErrIllegalDocID = &Error{Status: http.StatusBadRequest, Name: "illegal_docid", Reason: "Only reserved document ids may start with underscore."}
	// ErrDocValidation: a document body CouchDB would refuse (bad special member).
	ErrDocValidation = &Error{Status: http.StatusBadRequest, Name: "doc_validation", Reason: "invalid document"}
	// ErrUnauthorized: missing or wrong credentials.
	ErrUnauthorized = &Error{Status: http.StatusUnauthorized, Name: "unauthorized", Reason: "Name or password is incorrect."}
	// ErrForbidden: the write was refused (validation function, permissions).
	ErrForbidden = &Error{Status: http.StatusForbidden, Name: "forbidden", Reason: "forbidden"}
	// ErrMissingStub: an attachment stub names no attachment of the parent revision.
	ErrMissingStub = &Error{Status: http.StatusPreconditionFailed, Name: "missing_stub", Reason: "stub without a matching attachment"}
	// ErrFileExists: the database already exists.
	ErrFileExists = &Error{Status: http.StatusPreconditionFailed, Name: "file_exists", Reason: "The database could not be created, the file already exists."}
	// ErrTooLarge: a request or document exceeds a size limit.
	ErrTooLarge = &Error{Status: http.StatusRequestEntityTooLarge, Name: "too_large", Reason: "the request entity is too large"}
	// ErrDigestMismatch: attachment bytes that do not match their digest or length.
	ErrDigestMismatch = &Error{Status: http.StatusBadRequest, Name: "bad_request", Reason: "attachment digest or length mismatch"}
	// ErrAttachmentNotDownloaded: the store knows the attachment (its
	// metadata came with a lazy replication) but not its bytes. It is
	// answered as CouchDB's 404 not_found, yet a not_found from a peer is
	// ErrNotFound, never this, and this is not ErrNotFound: the document
	// and the attachment exist.
	ErrAttachmentNotDownloaded = &Error{Status: http.StatusNotFound, Name: "not_found", Reason: "attachment body not downloaded"}
)

// Errorf returns a new error with base's name, status and identity and a
// formatted reason: errors.Is(Errorf(ErrNotFound, ...), ErrNotFound).
func Errorf(base *Error, format string, args ...any) *Error {
	return &Error{Status: base.Status, Name: base.Name, Reason: fmt.Sprintf(format, args...), kind: base.identity()}
}

// wireSentinels are the sentinels an answer from a peer can be: one per
// wire name (ErrDigestMismatch, a local check, is not among them).
var wireSentinels = []*Error{ErrNotFound, ErrConflict, ErrBadRequest, ErrIllegalDocID, ErrDocValidation, ErrUnauthorized,
	ErrForbidden, ErrMissingStub, ErrFileExists, ErrTooLarge}

// FromBody builds an error from a CouchDB error body and HTTP status. When
// status is 0 it is inferred from the well-known error names. The error
// matches the sentinel of that name and status, if there is one.
func FromBody(status int, name, reason string) *Error {
	e := &Error{Status: status, Name: name, Reason: reason}
	for _, s := range wireSentinels {
		if s.Name == name && (status == 0 || status == s.Status) {
			e.Status, e.kind = s.Status, s
			return e
		}
	}
	if e.Status == 0 {
		e.Status = http.StatusInternalServerError
	}
	return e
}

// StatusOf returns the HTTP status of err: the status of an *Error in its
// chain, else 500.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		return e.Status
	}
	return http.StatusInternalServerError
}
