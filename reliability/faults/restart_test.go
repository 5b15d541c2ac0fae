package faults

import (
	"context"
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// TestServerRestartLosesData restarts pouchdb-server (in memory) on the same
// port: the database and its replication log are gone. A replication must
// say clearly that the database is missing (couchdoc.ErrNotFound), within a
// bound, and once the database is back must start again from scratch rather
// than trust the checkpoint the other side kept.
func TestServerRestartLosesData(t *testing.T) {
	pouch := rtest.StartPouch(t)
	for _, dir := range []string{"pull", "push", "live"} {
		t.Run(dir, func(t *testing.T) {
			rtest.Count.Scenarios.Add(1)
			ctx := ctxFor(t, 120*time.Second)
			rng := rand.New(rand.NewSource(int64(len(dir))))
			local := localdbtest.OpenNamed(t, "local", nil)
			dbURL := pouch.CreateDB(t, "restart-"+dir)
			remote, err := couch.New(dbURL, &couch.Options{Timeout: 3 * time.Second, Retries: 2, BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			docs := rtest.Gen(rng, "d", 80, true, false)
			src, dst := sync.Peer(localpeer.New(local)), sync.Peer(remote)
			if dir == "pull" {
				rtest.WriteRemote(ctx, t, dbURL, docs)
				src, dst = remote, localpeer.New(local)
			} else {
				rtest.WriteLocal(ctx, t, local, docs)
			}
			opts := replOpts(src, dst)

			if dir == "live" {
				liveRestart(ctx, t, pouch, remote, opts)
			} else {
				if _, err := sync.Replicate(ctx, opts); err != nil {
					t.Fatal(err)
				}
				pouch.Restart(t)
				rtest.Count.Faults.Add(1)
				start := time.Now()
				_, err := sync.Replicate(ctx, opts)
				if !errors.Is(err, couchdoc.ErrNotFound) {
					t.Fatalf("replication with the database gone: got %v, want a not-found error", err)
				}
				if !strings.Contains(err.Error(), dbURL) && !strings.Contains(err.Error(), "restart-"+dir) {
					t.Errorf("error does not name the missing database: %v", err)
				}
				t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
			}

			// The database comes back. For a pull its new content puts new
			// documents at the low sequences the old checkpoint covers.
			pouch.CreateDB(t, "restart-"+dir)
			if dir == "pull" {
				rtest.WriteRemote(ctx, t, dbURL, rtest.Gen(rng, "new", 60, false, false))
				rtest.WriteRemote(ctx, t, dbURL, docs)
			}
			if dir == "live" {
				opts = replOpts(localpeer.New(local), remote)
			}
			if _, err := sync.Replicate(ctx, opts); err != nil {
				t.Fatalf("replication once the database is back: %v", err)
			}
			a := rtest.LocalSnapshot(ctx, t, local)
			b := rtest.RemoteSnapshot(ctx, t, dbURL)
			if d := rtest.Diff(a, b, 10); len(d) > 0 {
				rtest.Count.Lost.Add(int64(len(d)))
			}
			rtest.RequireEqual(t, "local vs restarted remote", a, b)
			clean, _ := couch.New(dbURL, nil)
			s, d := sync.Peer(localpeer.New(local)), sync.Peer(clean)
			if dir == "pull" {
				s, d = d, s
			}
			rtest.CheckCheckpoints(ctx, t, sync.ReplicationID(opts), s, d)
		})
	}
}

// liveRestart runs a continuous sync until it is idle, restarts the server
// and expects the sync to end with a not-found error within a bound.
func liveRestart(ctx context.Context, t *testing.T, pouch *rtest.Pouch, remote sync.Peer, opts sync.Options) {
	t.Helper()
	lp := opts.Source
	opts.Source, opts.Target = nil, nil
	opts.Continuous = true
	opts.Heartbeat = 300 * time.Millisecond
	rep, err := sync.NewSync(lp, remote, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rep.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for rep.Status().State != sync.StateIdle {
		if time.Now().After(deadline) {
			t.Fatalf("continuous sync never idle: %+v", rep.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pouch.Restart(t)
	rtest.Count.Faults.Add(1)
	start := time.Now()
	select {
	case <-rep.Done():
	case <-time.After(45 * time.Second):
		t.Fatalf("continuous sync still running 45 s after its database vanished: %+v", rep.Status())
	}
	err = rep.Wait()
	if !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("continuous sync with the database gone ended with %v, want a not-found error", err)
	}
	t.Logf("ended after %v: %v", time.Since(start).Round(time.Millisecond), err)
}
