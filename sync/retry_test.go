package sync

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

// TestContinuousStopsOnUnknownError: an error of unknown kind (here, a
// target to create that cannot create databases) is permanent, so a
// continuous replication ends in StateError instead of going offline and
// back forever.
func TestContinuousStopsOnUnknownError(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 3)
	tgt.fail = func(m string) error {
		if m == "Info" {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "Database does not exist.")
		}
		return nil
	}
	r, err := New(Options{Source: src, Target: tgt, Continuous: true, CreateTarget: true,
		RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		r.Stop()
		t.Fatalf("still running after 10 s (state %s, %d Info calls): an unknown error is retried", r.Status().State, tgt.count("Info"))
	}
	if err := r.Wait(); err == nil || r.Status().State != StateError {
		t.Fatalf("ended with %v in state %s, want a permanent error", err, r.Status().State)
	}
	if n := tgt.count("Info"); n != 1 {
		t.Fatalf("target checked %d times, want 1 (no retry of a permanent error)", n)
	}
}

// TestRetriesBoundAttempts: Retries 3 is at most 4 attempts of a step.
func TestRetriesBoundAttempts(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 3)
	unavailable := couchdoc.FromBody(503, "service_unavailable", "restarting")
	src.fail = func(m string) error {
		if m == "Changes" {
			return unavailable
		}
		return nil
	}
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, Retries: 3,
		RetryDelay: time.Millisecond, MaxRetryDelay: 2 * time.Millisecond})
	if !errors.Is(err, unavailable) || res == nil || res.Retries != 3 {
		t.Fatalf("err = %v, result %+v; want the 503 after 3 retries", err, res)
	}
	if n := src.count("Changes"); n != 4 {
		t.Fatalf("changes read %d times, want 4", n)
	}
}
