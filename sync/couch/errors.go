package couch

import (
	"errors"
	"fmt"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/failure"
)

// HTTPError is a CouchDB error answer (status >= 400). It unwraps to the
// *couchdoc.Error carrying the status, so errors.Is(err,
// couchdoc.ErrNotFound) and couchdoc.StatusOf work.
type HTTPError struct {
	Peer   string // the database URL, without credentials
	Method string
	Path   string
	// RetryAfter is the server's Retry-After, if any.
	RetryAfter time.Duration
	Err        *couchdoc.Error
}

func (e *HTTPError) Error() string { return e.Peer + ": " + e.WithoutPeer() }

// WithoutPeer is Error without the peer, for a message that names it
// already.
func (e *HTTPError) WithoutPeer() string {
	return fmt.Sprintf("%s %s: %d %v", e.Method, e.Path, e.Err.Status, e.Err)
}

// Unwrap returns the CouchDB error.
func (e *HTTPError) Unwrap() error { return e.Err }

// Transient reports whether repeating the request may succeed: 5xx, 408,
// 429 and a cluster's 412 "nodedown" (failure.TransientAnswer).
func (e *HTTPError) Transient() bool { return failure.TransientAnswer(e.Err.Status, e.Err.Name) }

// RetryDelay is the server's Retry-After: retry loops wait at least that
// long.
func (e *HTTPError) RetryDelay() time.Duration { return e.RetryAfter }

// UnreachableError is a request that got no complete answer: the peer
// could not be reached, the connection broke, the body was cut short, or
// the peer went silent for longer than Options.Timeout (TimedOut). It
// is transient unless the peer's certificate was refused.
type UnreachableError struct {
	Peer     string
	Method   string
	Path     string
	TimedOut bool
	// BadCertificate marks a TLS certificate the client does not trust: a
	// configuration problem that retrying does not fix.
	BadCertificate bool
	Err            error
}

func (e *UnreachableError) Error() string { return e.Peer + ": " + e.WithoutPeer() }

// WithoutPeer is Error without the peer, for a message that names it
// already.
func (e *UnreachableError) WithoutPeer() string {
	what := "unreachable"
	switch {
	case e.TimedOut:
		what = "timed out"
	case e.BadCertificate:
		what = "has an untrusted TLS certificate"
	}
	return fmt.Sprintf("%s %s: peer %s: %v", e.Method, e.Path, what, e.Err)
}

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// AnswerError is an answer that does not parse as what was asked for (a
// *wire.MalformedError), naming the request it answered.
type AnswerError struct {
	Peer   string
	Method string
	Path   string
	Err    error
}

func (e *AnswerError) Error() string { return e.Peer + ": " + e.WithoutPeer() }

// WithoutPeer is Error without the peer, for a message that names it
// already.
func (e *AnswerError) WithoutPeer() string { return fmt.Sprintf("%s %s: %v", e.Method, e.Path, e.Err) }

// Unwrap returns the malformed answer's error.
func (e *AnswerError) Unwrap() error { return e.Err }

// Transient reports whether the same request may get through later: true
// but for refused certificates.
func (e *UnreachableError) Transient() bool { return !e.BadCertificate }

// errTimeout is the cause of an UnreachableError with TimedOut set.
var errTimeout = errors.New("no answer within the timeout")

// IsRetryable reports whether a failed call may succeed if repeated: the
// peer was unreachable, timed out or cut the answer short, answered 5xx,
// 408, 429 or a cluster's 412 "nodedown", or sent an answer that does not parse (attachment bytes that
// fail their digest while an answer is read included). Answers such as
// 400, 401, 403, 404, 409 and 412, a digest mismatch of bytes the caller
// sends, refused certificates, a canceled context and errors of unknown
// kind are not. It is the
// classification the replicator retries by (internal/failure).
func IsRetryable(err error) bool { return failure.Transient(err) }

// Temporary is Transient (UnreachableError is a net.Error, so stream
// readers pass it through unchanged).
func (e *UnreachableError) Temporary() bool { return e.Transient() }

// Timeout reports whether the peer went silent for too long (it makes
// UnreachableError a net.Error).
func (e *UnreachableError) Timeout() bool { return e.TimedOut }
