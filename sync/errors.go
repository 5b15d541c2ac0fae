package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// PeerError is an error of one peer, naming its role ("source" or "target")
// and the peer (Peer.String(), which holds no credentials).
type PeerError struct {
	Role string
	Peer string
	// Op is what the replicator was doing ("check", "read checkpoint", ...).
	Op  string
	Err error
}

// Error explains the failure, with a hint for the usual HTTP statuses.
func (e *PeerError) Error() string {
	hint := ""
	var ce *couchdoc.Error
	if errors.As(e.Err, &ce) {
		switch ce.Status {
		case http.StatusUnauthorized:
			hint = " (wrong or missing credentials)"
		case http.StatusForbidden:
			hint = " (the credentials lack the permission)"
		case http.StatusNotFound:
			if e.Op == "check" {
				hint = " (the database does not exist)"
			}
		}
	}
	return fmt.Sprintf("%s %s: %s: %v%s", e.Role, e.Peer, e.Op, e.Err, hint)
}

// Unwrap returns the peer's error.
func (e *PeerError) Unwrap() error { return e.Err }

func peerErr(role string, p Peer, op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PeerError
	if errors.As(err, &pe) {
		return err
	}
	return &PeerError{Role: role, Peer: p.String(), Op: op, Err: err}
}

// IsTransient reports whether err may go away by retrying: network errors,
// truncated bodies, 5xx, 408 and 429 answers. CouchDB errors with another
// 4xx status (bad request, unauthorized, forbidden, not found, conflict,
// precondition failed) and context cancellation are permanent. An error
// with a Transient() bool method decides for itself. A peer's answer that
// could not be parsed (garbled or cut JSON, a broken multipart body) is
// transient although it maps to a 400: the bytes were damaged on the way or
// the server glitched, and asking again is how data keeps flowing.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var me *wire.MalformedError
	if errors.As(err, &me) {
		return true
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	var ce *couchdoc.Error
	if errors.As(err, &ce) {
		s := ce.Status
		return s == 0 || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooManyRequests
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// Unknown errors (such as a body cut mid-JSON) are retried: data must flow.
	return true
}

// backoff returns the delay before retry number attempt (0-based): base
// doubled each time, capped, with full jitter over its upper half.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retry runs fn until it succeeds, fails permanently, or used up retries;
// onRetry (may be nil) hears about each transient failure.
func (r *replication) retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = fn()
		if err == nil || ctx.Err() != nil || !IsTransient(err) || attempt >= r.opts.Retries {
			return err
		}
		r.noteError(err)
		if serr := sleep(ctx, backoff(attempt, r.opts.RetryDelay, r.opts.MaxRetryDelay)); serr != nil {
			return err
		}
	}
}
