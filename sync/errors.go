package sync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/failure"
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

// isTransient is the one classification of failures (internal/failure,
// couch.IsRetryable's too): network trouble, 5xx, 408 and 429 answers and
// garbled answers are retried; CouchDB's other 4xx answers, a canceled
// context and errors of unknown kind are permanent.
func isTransient(err error) bool { return failure.Transient(err) }

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

// retry runs fn, one step of the replication, until it succeeds, fails
// permanently, or used up Options.Retries: at most Retries+1 attempts.
// Each transient failure is kept as the last error, and the wait before
// the next attempt is the backoff or the peer's Retry-After (up to a
// minute), whichever is longer. The replicator is the one layer that
// retries: peers send each request once.
func (r *replication) retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = fn()
		if err == nil || ctx.Err() != nil || !isTransient(err) || attempt >= r.opts.Retries {
			return err
		}
		r.noteError(err)
		wait := max(backoff(attempt, r.opts.RetryDelay, r.opts.MaxRetryDelay),
			min(failure.Delay(err), max(r.opts.MaxRetryDelay, time.Minute)))
		if serr := sleep(ctx, wait); serr != nil {
			return err
		}
	}
}
