package faults

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// TestContinuousSurvivesOneBadAnswer: one broken answer (garbled JSON, a
// cut body, a 500) on one endpoint must not end a continuous replication
// for good. CouchDB's scheduler restarts a crashed continuous job with
// backoff; ours must go offline and come back by itself, and documents
// written afterwards must arrive.
func TestContinuousSurvivesOneBadAnswer(t *testing.T) {
	pouch := rtest.StartPouch(t)
	for _, kind := range []rtest.Kind{rtest.Garble, rtest.Cut, rtest.Status} {
		for _, path := range []string{"/_changes", "/_bulk_get", "/_revs_diff", "/_bulk_docs", "/_local/"} {
			for _, pull := range []bool{true, false} {
				dir := "push"
				if pull {
					dir = "pull"
				}
				t.Run(fmt.Sprintf("%s%s/%s", kind, path, dir), func(t *testing.T) {
					t.Parallel()
					rtest.Count.Scenarios.Add(1)
					continuousWithOneFault(t, pouch, kind, path, pull)
				})
			}
		}
	}
}

func continuousWithOneFault(t *testing.T, pouch *rtest.Pouch, kind rtest.Kind, path string, pull bool) {
	ctx := ctxFor(t, 60*time.Second)
	rng := rand.New(rand.NewSource(int64(len(path))))
	local := localdbtest.OpenNamed(t, "local", nil)
	dbURL := pouch.CreateDB(t, fmt.Sprintf("one-%d", time.Now().UnixNano()%1e9))
	fp := rtest.NewFaultProxy(t, dbURL, 1)
	remote, err := couch.New(fp.URL, &couch.Options{Retries: -1, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	write := func(prefix string) {
		docs := rtest.Gen(rng, prefix, 10, false, false)
		if pull {
			rtest.WriteRemote(ctx, t, dbURL, docs)
		} else {
			rtest.WriteLocal(ctx, t, local, docs)
		}
	}
	src, dst := sync.Peer(remote), sync.Peer(localpeer.New(local))
	if !pull {
		src, dst = dst, remote
	}
	write("a")
	fp.Set(rtest.Plan{Prob: 1, Kinds: []rtest.Kind{kind}, Statuses: []int{500}, Max: 1, Paths: []string{path}})
	rep, err := sync.New(sync.Options{Source: src, Target: dst, Continuous: true, Heartbeat: 300 * time.Millisecond,
		Retries: 1, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rep.Stop()
	time.Sleep(200 * time.Millisecond)
	write("b")
	deadline := time.Now().Add(20 * time.Second)
	for {
		var diff []string
		if rep.Status().State == sync.StateIdle {
			diff = rtest.Diff(rtest.LocalSnapshot(ctx, t, local), rtest.RemoteSnapshot(ctx, t, dbURL), 3)
			if len(diff) == 0 {
				break
			}
		}
		select {
		case <-rep.Done():
			err := rep.Wait()
			t.Fatalf("the continuous replication ended after one %s answer on %s (%s): %v", kind, path, fp.InjectedBy(), err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not in sync 20 s after one %s answer on %s (%s): state %s, %v", kind, path, fp.InjectedBy(), rep.Status().State, diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fp.Injected() == 0 {
		t.Logf("no %s fault injected on %s (endpoint not used)", kind, path)
	}
}
