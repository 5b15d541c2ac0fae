package mobile

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/failure"
	"github.com/settee/settee/localdb"
)

// Error codes, as ErrorCode returns them. Every error a call of this
// package returns has a message that starts with its code and ": ", so
// code that only has the message (a log, a crash report) reads the same
// code. The CouchDB ones are CouchDB's error names; a remote server may
// answer others, which ErrorCode returns as they are.
const (
	// CodeNotFound: the document, revision, attachment or database is
	// missing (or the attachment's body is not downloaded).
	CodeNotFound = "not_found"
	// CodeConflict: the write does not name the current revision.
	CodeConflict = "conflict"
	// CodeBadRequest: malformed input (JSON, ids, revisions, options).
	CodeBadRequest = "bad_request"
	// CodeIllegalDocID: an id starting with '_' that CouchDB reserves.
	CodeIllegalDocID = "illegal_docid"
	// CodeDocValidation: a document body CouchDB would refuse.
	CodeDocValidation = "doc_validation"
	// CodeUnauthorized: missing or wrong credentials (remote), or a
	// validate_doc_update's unauthorized (SetValidation).
	CodeUnauthorized = "unauthorized"
	// CodeForbidden: the server refused the write (remote), or a
	// validate_doc_update did (SetValidation).
	CodeForbidden = "forbidden"
	// CodeMissingStub: an attachment stub names no attachment of the parent.
	CodeMissingStub = "missing_stub"
	// CodeFileExists: the database or file already exists.
	CodeFileExists = "file_exists"
	// CodeTooLarge: a document or request exceeds a size limit.
	CodeTooLarge = "too_large"
	// CodeClosed: the Database (or the batch) was closed or is over.
	CodeClosed = "closed"
	// CodeDatabaseOpen: DeleteDatabase of a database open in this process.
	CodeDatabaseOpen = "database_open"
	// CodeNotAStore: the file is not a Settee store (another program's).
	CodeNotAStore = "not_a_store"
	// CodeNewerStore: the store was written by a newer Settee.
	CodeNewerStore = "newer_store"
	// CodeWrongKey: an encrypted store opened with another key or with
	// none (OpenEncrypted), or a plain store opened with a key.
	CodeWrongKey = "wrong_key"
	// CodeFailedAuthentication: a page of an encrypted store failed
	// authentication: the file is damaged or was changed outside Settee.
	CodeFailedAuthentication = "failed_authentication"
	// CodeNetwork: the remote could not be reached.
	CodeNetwork = "network"
	// CodeCancelled: the call was cut short by Close.
	CodeCancelled = "cancelled"
	// CodeInternal: a bug in Settee (a recovered panic).
	CodeInternal = "internal"
	// CodeUnknown: anything else (I/O errors, the app's own exceptions).
	CodeUnknown = "unknown"
)

// knownCodes are the codes a message prefix is read as.
var knownCodes = map[string]bool{}

func init() {
	for _, c := range []string{CodeNotFound, CodeConflict, CodeBadRequest, CodeIllegalDocID, CodeDocValidation,
		CodeUnauthorized, CodeForbidden, CodeMissingStub, CodeFileExists, CodeTooLarge, CodeClosed,
		CodeDatabaseOpen, CodeNotAStore, CodeNewerStore, CodeWrongKey, CodeFailedAuthentication, CodeNetwork, CodeCancelled, CodeInternal, CodeUnknown} {
		knownCodes[c] = true
	}
}

// ErrorCode returns the code of an error a call of this package returned
// (one of the Code constants, or a remote server's own CouchDB error
// name), "" for nil. Pass the exception (Kotlin/Java) or the NSError
// (Swift) as caught: the binding hands Go its own error back. For any
// other error it reads the code its message starts with, else
// CodeUnknown.
func ErrorCode(err error) (code string) {
	defer func() {
		if recover() != nil {
			code = CodeUnknown
		}
	}()
	if err == nil {
		return ""
	}
	if c := codeOf(err); c != CodeUnknown {
		return c
	}
	return codeOfMessage(err.Error())
}

// ErrorClass sorts an error of this package by what fixes it, as the
// command line's exit codes do (internal/failure): "bad_input" (correct
// the input), "not_found", "unauthorized" (new credentials), "conflict"
// (read the current revision), "retry" (unreachable or failing for now:
// try again later) or "failed" (none of these: local I/O errors, a remote
// that is not CouchDB); "" for nil.
func ErrorClass(err error) (class string) {
	defer func() {
		if recover() != nil {
			class = failure.Failed.String()
		}
	}()
	switch {
	case err == nil:
		return ""
	case errors.Is(err, localdb.ErrNoStore), errors.Is(err, fs.ErrNotExist):
		return failure.NotFound.String()
	case errors.Is(err, localdb.ErrWrongKey), errors.Is(err, localdb.ErrNeedKey):
		return failure.Unauthorized.String() // only the right key fixes it
	}
	return failure.Classify(err).String()
}

// codeOfMessage reads the code a message starts with.
func codeOfMessage(msg string) string {
	if i := strings.Index(msg, ": "); i > 0 && knownCodes[msg[:i]] {
		return msg[:i]
	}
	if knownCodes[msg] {
		return msg
	}
	return CodeUnknown
}

// codedError gives an error without a CouchDB name its code.
type codedError struct {
	code string
	err  error
}

func (e *codedError) Error() string { return e.code + ": " + e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// codeOf classifies a Go error.
func codeOf(err error) string {
	var ce *codedError
	var de *couchdoc.Error
	switch {
	case errors.As(err, &ce):
		return ce.code
	case errors.As(err, &de) && de.Name != "":
		return de.Name
	case errors.Is(err, errClosed), errors.Is(err, localdb.ErrClosed):
		return CodeClosed
	case errors.Is(err, localdb.ErrStoreOpen):
		return CodeDatabaseOpen
	case errors.Is(err, localdb.ErrNotStore):
		return CodeNotAStore
	case errors.Is(err, localdb.ErrNewerStore):
		return CodeNewerStore
	case errors.Is(err, localdb.ErrWrongKey), errors.Is(err, localdb.ErrNeedKey), errors.Is(err, localdb.ErrPlainStore):
		return CodeWrongKey
	case errors.Is(err, localdb.ErrAuthFailed):
		return CodeFailedAuthentication
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, localdb.ErrNoStore):
		return CodeNotFound
	case errors.Is(err, fs.ErrExist):
		return CodeFileExists
	case errors.Is(err, context.Canceled):
		return CodeCancelled
	case failure.Unreachable(err):
		return CodeNetwork
	}
	return CodeUnknown
}

// withCode returns err with a message that starts with its code: as it
// is when it already does (CouchDB's errors), else wrapped.
func withCode(err error) error {
	if err == nil {
		return nil
	}
	code := codeOf(err)
	if strings.HasPrefix(err.Error(), code+": ") {
		return err
	}
	return &codedError{code: code, err: err}
}

// badRequest is a CouchDB bad_request error about the app's input.
func badRequest(format string, args ...any) error {
	return couchdoc.Errorf(couchdoc.ErrBadRequest, format, args...)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
