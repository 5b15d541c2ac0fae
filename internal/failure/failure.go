// Package failure is Settee's one classification of failed calls to a
// peer: what may succeed if asked again (Transient), what means the peer
// could not be talked to at all (Unreachable), what only new credentials
// fix (Auth), and how long the peer asked us to wait (Delay). The replicator (sync), the HTTP client
// (sync/couch.IsRetryable) and the CLI's exit codes all use it, so they
// never disagree.
//
// Unknown errors are permanent: retrying is for failures known to pass
// (the network, an overloaded or restarting server, a garbled answer), not
// for bugs or refusals, which would otherwise loop forever in a
// continuous replication.
package failure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// Transient reports whether err may go away if the call is repeated:
//   - an error with a Transient() bool method decides for itself (the HTTP
//     client's errors do: 5xx, 408 and 429 answers, unreachable peers but
//     for refused TLS certificates);
//   - a *couchdoc.Error with status 5xx, 408 or 429, or CouchDB's
//     cluster answer 412 "nodedown" (TransientAnswer);
//   - a peer's answer that does not parse (wire.ErrMalformed, but not
//     wire.ErrNotCouchDB: well-formed JSON of another shape, which no
//     retry changes; the HTTP client also makes ErrMalformed of
//     attachment bytes failing their digest while it reads an answer):
//     the bytes were damaged on the way or the server glitched, and
//     asking again is how data keeps flowing;
//   - network errors (net.Error, refused or reset connections, bodies cut
//     short) and context.DeadlineExceeded that is not the caller's (a
//     retry loop stops on its own context first).
//
// Everything else is permanent: a canceled context, refused TLS
// certificates, CouchDB's 4xx answers (bad request, unauthorized,
// forbidden, not found, conflict, precondition failed, and a digest
// mismatch of bytes a caller sends or stores), and any error this list
// does not name.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	if BadCertificate(err) {
		return false
	}
	if errors.Is(err, wire.ErrNotCouchDB) {
		return false
	}
	if errors.Is(err, wire.ErrMalformed) {
		return true
	}
	var ce *couchdoc.Error
	if errors.As(err, &ce) {
		return TransientAnswer(ce.Status, ce.Name)
	}
	return Unreachable(err) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// TransientStatus reports whether an HTTP answer with status s may be
// different if the request is repeated: 5xx, 408 and 429.
func TransientStatus(s int) bool {
	return s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests
}

// TransientAnswer reports whether a CouchDB error answer may be different
// if the request is repeated: TransientStatus, or 412 "nodedown", which a
// cluster answers while the shard copies a request needs are on nodes that
// are down or in maintenance mode (chttpd's {nodedown, Reason} and
// {maintenance_mode, Node}). CouchDB's other cluster-availability answers
// are 5xx already: 500 "timeout", 500 "write_quorum_not_met", 503
// "service unavailable" (all workers died).
func TransientAnswer(status int, name string) bool {
	return TransientStatus(status) || status == http.StatusPreconditionFailed && name == "nodedown"
}

// Auth reports whether err is a refusal of the credentials: 401
// (unauthorized) or 403 (forbidden). Repeating the request with the same
// credentials gets the same answer; new credentials may not.
func Auth(err error) bool {
	s := couchdoc.StatusOf(err)
	return s == http.StatusUnauthorized || s == http.StatusForbidden
}

// Unreachable reports whether err means that no answer came from the peer:
// a refused, reset or unroutable connection, a DNS failure, a TLS
// certificate the client does not trust, a timeout (any net.Error, which
// includes the HTTP client's *couch.UnreachableError) or a deadline.
//
// A bare syscall.Errno is a net.Error too, so that every local file error
// would be one: an errno counts only when it is one of the network's, and
// never under a file operation (*fs.PathError: a write to a closed pipe).
func Unreachable(err error) bool {
	var pe *fs.PathError
	var oe *net.OpError
	if errors.As(err, &pe) && !errors.As(err, &oe) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		if _, errno := ne.(syscall.Errno); !errno {
			return true
		}
	}
	return BadCertificate(err) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, context.DeadlineExceeded)
}

// Delay is the wait the peer asked for before the next attempt (an HTTP
// answer's Retry-After), or 0.
func Delay(err error) time.Duration {
	var d interface{ RetryDelay() time.Duration }
	if errors.As(err, &d) {
		return d.RetryDelay()
	}
	return 0
}

// BadCertificate reports a TLS certificate verification failure.
func BadCertificate(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}
