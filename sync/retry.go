package sync

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/settee/settee/internal/failure"
)

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
		r.retries.Add(1)
		wait := max(backoff(attempt, r.opts.RetryDelay, r.opts.MaxRetryDelay),
			min(failure.Delay(err), max(r.opts.MaxRetryDelay, time.Minute)))
		if serr := sleep(ctx, wait); serr != nil {
			return err
		}
	}
}
