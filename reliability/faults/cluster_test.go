package faults

import (
	"fmt"
	"maps"
	"math/rand"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// clusterPlan is what a CouchDB cluster losing a node answers: the
// recorded 412 nodedown, 503 from a coordinator whose workers died, and
// connections reset at random points of the answer, on every endpoint a
// replication uses (checkpoint reads and writes included).
var clusterPlan = rtest.Plan{Prob: 0.3, Kinds: []rtest.Kind{rtest.Nodedown, rtest.Status, rtest.Cut}, Statuses: []int{503},
	Paths: []string{"/_changes", "/_bulk_get", "/_revs_diff", "/_bulk_docs", "/_local/"}}

// TestContinuousThroughClusterFaults: a continuous pull, push and two-way
// sync through a cluster losing a node never end (no restart by the test),
// and once the faults stop both sides hold the same leaves and winners,
// no revision was written twice, and the checkpoints resume: a new run
// starts from them and reads nothing.
func TestContinuousThroughClusterFaults(t *testing.T) {
	for i, dir := range []string{"pull", "push", "sync"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			pouch := rtest.StartPouch(t)
			rtest.Count.Scenarios.Add(1)
			clusterFaults(t, pouch, int64(100+i), dir)
		})
	}
}

func clusterFaults(t *testing.T, pouch *rtest.Pouch, seed int64, dir string) {
	ctx := ctxFor(t, 90*time.Second)
	rng := rand.New(rand.NewSource(seed))
	r := &rig{local: localdbtest.OpenNamed(t, "local", nil), direct: pouch.CreateDB(t, fmt.Sprintf("cl-%s-%d", dir, seed))}
	r.fp = rtest.NewFaultProxy(t, r.direct, seed)
	faulty, err := couch.New(r.fp.URL, &couch.Options{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.clean, err = couch.New(r.direct, nil); err != nil {
		t.Fatal(err)
	}
	// Both sides get documents in sync mode, with the same ids on both
	// sides for some: conflicts the replication must keep.
	write := func(prefix string, n int) {
		if dir != "push" {
			rtest.WriteRemote(ctx, t, r.direct, rtest.Gen(rng, "r"+prefix, n, false, false))
		}
		if dir != "pull" {
			rtest.WriteLocal(ctx, t, r.local, rtest.Gen(rng, "l"+prefix, n, false, false))
		}
		if dir == "sync" {
			rtest.WriteRemote(ctx, t, r.direct, rtest.Gen(rng, "both"+prefix, n/4, false, false))
			rtest.WriteLocal(ctx, t, r.local, rtest.Gen(rng, "both"+prefix, n/4, false, false))
		}
	}
	write("a", 60)

	var offline, lastIdle atomic.Int64
	opts := sync.Options{Continuous: true, Heartbeat: 300 * time.Millisecond, BatchSize: 20, BulkGetSize: 10, Workers: 2,
		Retries: 1, RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 100 * time.Millisecond,
		OnEvent: func(ev sync.Event) {
			if ev.Kind == sync.EventState && ev.State == sync.StateOffline {
				offline.Add(1)
			}
			if ev.Kind == sync.EventState && ev.State == sync.StateIdle {
				lastIdle.Store(time.Now().UnixNano())
			}
		}}
	local := localpeer.New(r.local)
	newRep := func() (*sync.Replicator, error) {
		o := opts
		switch dir {
		case "pull":
			o.Source, o.Target = faulty, local
			return sync.New(o)
		case "push":
			o.Source, o.Target = local, faulty
			return sync.New(o)
		}
		return sync.NewSync(local, faulty, o)
	}
	rep, err := newRep()
	if err != nil {
		t.Fatal(err)
	}
	r.fp.Set(clusterPlan)
	if err := rep.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ended := func() {
		select {
		case <-rep.Done():
			t.Fatalf("the continuous %s ended under cluster faults (%s): %v", dir, r.fp.InjectedBy(), rep.Wait())
		default:
		}
	}
	for round := 0; round < 5; round++ {
		time.Sleep(400 * time.Millisecond)
		ended()
		write(fmt.Sprintf("%d-", round), 15)
	}
	// Faults and writes go on until each kind was injected at least once
	// (bounded).
	for deadline, i := time.Now().Add(20*time.Second), 0; time.Now().Before(deadline); i++ {
		by := r.fp.InjectedBy()
		if strings.Contains(by, "nodedown=") && strings.Contains(by, "status=") && strings.Contains(by, "cut=") {
			break
		}
		ended()
		write(fmt.Sprintf("x%d-", i), 4)
		time.Sleep(200 * time.Millisecond)
	}
	r.fp.Set(rtest.Plan{})
	faultsOff := time.Now()

	var diff []string
	var wl, wr map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for {
		ended()
		if st := rep.Status(); st.State == sync.StateIdle {
			a, b := rtest.LocalSnapshot(ctx, t, r.local), rtest.RemoteSnapshot(ctx, t, r.direct)
			if diff = rtest.Diff(a, b, 5); len(diff) == 0 {
				wl = rtest.LocalWinners(ctx, t, r.local)
				wr = rtest.RemoteWinners(ctx, t, r.direct, slicesOfKeys(wl))
				if maps.Equal(wl, wr) {
					break
				}
				diff = []string{"winners differ"}
			}
		}
		if time.Now().After(deadline) {
			rtest.Count.Lost.Add(int64(len(diff)))
			t.Fatalf("the continuous %s did not converge 30 s after the faults stopped (state %s):\n  %s",
				dir, rep.Status().State, strings.Join(diff, "\n  "))
		}
		time.Sleep(150 * time.Millisecond)
	}
	// Caught up: the last time a direction went idle before they agreed.
	caughtUp := max(0, time.Unix(0, lastIdle.Load()).Sub(faultsOff))
	if err := rep.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	r.compare(ctx, t)

	// The checkpoints are sane and resume: the same replication started
	// again starts from them and reads nothing.
	var retries, read, written, failures int64
	results := rep.Results()
	for i, res := range results {
		retries += res.Retries
		read += res.Stats.DocsRead
		written += res.Stats.DocsWritten
		failures += res.Stats.DocWriteFailures
		src, tgt := sync.Peer(r.clean), sync.Peer(local)
		if dir == "push" || dir == "sync" && i == 0 {
			src, tgt = local, r.clean
		}
		rtest.CheckCheckpoints(ctx, t, res.ReplicationID, src, tgt)
	}
	again, err := newRep()
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); again.Status().State != sync.StateIdle; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replication started again is not idle: %+v", again.Status())
		}
	}
	if err := again.Stop(); err != nil {
		t.Fatal(err)
	}
	for i, res := range again.Results() {
		if string(res.StartSeq) != string(results[i].LastSeq) || res.Stats.DocsRead != 0 {
			t.Errorf("started again: from %s (want the checkpoint %s), read %d documents (want 0)", res.StartSeq, results[i].LastSeq, res.Stats.DocsRead)
		}
	}
	if failures != 0 {
		t.Errorf("%d document write failures", failures)
	}
	t.Logf("%s: faults %s; went offline %d times; retried steps %d; docs read %d, written %d (re-read %d); caught up %v after the faults stopped",
		dir, r.fp.InjectedBy(), offline.Load(), retries, read, written, read-written, caughtUp.Round(time.Millisecond))
}

func slicesOfKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
