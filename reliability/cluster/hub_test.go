package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/server"
	"github.com/settee/settee/server/servertest"
)

// hubScenario is one run of a hub's _replicator jobs against the cluster.
type hubScenario struct {
	name   string
	pinned bool          // the jobs name the killed node, not the balancer
	down   time.Duration // how long the node stays down
	// interval is the documents' checkpoint_interval (ms); 0: the default.
	interval int64
}

// hubFigures is what a hub run measured, recorded in testdata/cluster.
type hubFigures struct {
	Scenario string `json:"scenario"`
	Docs     int    `json:"docs_per_side"`
	// States counts the _scheduler/docs states seen by polling, per job.
	States map[string]map[string]int `json:"states_seen"`
	// NotRunningMs is each job's longest stretch out of "running".
	NotRunningMs map[string]int64 `json:"longest_not_running_ms"`
	// ErrorCount is the highest error_count _scheduler/docs reported.
	ErrorCount map[string]float64 `json:"max_error_count"`
	// Crashed counts the "crashed" entries of the jobs' history.
	Crashed       map[string]int `json:"history_crashed"`
	KilledAfterMs int64          `json:"killed_after_ms"`
	DownMs        int64          `json:"down_ms"`
	// ConvergedMs: from the restart to both sides holding the same leaves.
	ConvergedMs int64 `json:"restart_to_converged_ms"`
	Leaves      int   `json:"leaves"`
	HubSeq      int64 `json:"hub_update_seq"`
	// PulledRevs: revisions the pull job wrote to the hub; PulledAgain:
	// how many of them it carried to the hub's _bulk_docs more than once.
	PulledRevs  int `json:"pulled_revs"`
	PulledAgain int `json:"pulled_again"`
}

// TestClusterHubJobs: a hub (settee serve, in process) keeps a database in
// step with the cluster through two continuous _replicator documents, a
// push and a pull, while both sides are written to and a node dies and
// comes back. The jobs never end (_scheduler/docs never shows failed,
// error or completed; crashing while the node is away is allowed and
// reported), both sides end with the same leaves, bodies and winners, and
// no revision was written twice on the hub.
func TestClusterHubJobs(t *testing.T) {
	e := clusterEnv(t)
	const killed = 2
	scenarios := []hubScenario{
		{name: "hub/balancer", down: 3 * time.Second, interval: 1000},
		{name: "hub/pinned", pinned: true, down: 8 * time.Second, interval: 1000},
		// Down for longer, with the default checkpoint interval: checkpoints
		// fall due while the node is away.
		{name: "hub/balancer-long", down: 20 * time.Second},
	}
	var report []string
	for _, sc := range scenarios {
		ok := t.Run(sc.name, func(t *testing.T) {
			f := runHub(t, e, sc, killed)
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			report = append(report, string(b))
		})
		if !ok {
			break
		}
	}
	for _, line := range report {
		t.Log(line)
		fmt.Println("cluster-hub:", line)
	}
}

func runHub(t *testing.T, e env, sc hubScenario, killed int) hubFigures {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	name := strings.NewReplacer("/", "_", "-", "_").Replace(fmt.Sprintf("settee_cluster_%s_%d", sc.name, time.Now().UnixNano()%1e9))
	direct := e.nodes[0] + "/" + name // a node that stays up
	if st := testutil.DoJSON(ctx, t, "PUT", direct, nil, nil); st != http.StatusCreated && st != http.StatusAccepted {
		t.Fatalf("create %s: %d", name, st)
	}
	t.Cleanup(func() { testutil.DoJSON(context.Background(), t, "DELETE", direct, nil, nil) })
	cloud := rtest.NewBalancer(t, e.nodes).URL(t, e.nodes[0]) + "/" + name
	if sc.pinned {
		cloud = e.nodes[killed] + "/" + name
	}

	hub := servertest.Start(t, &server.Config{Users: map[string]string{"admin": "adminpw"}, PasswordIterations: 10})
	root := strings.Replace(hub.URL, "http://", "http://admin:adminpw@", 1)
	hubDB := root + "/hub"
	if st := testutil.DoJSON(ctx, t, "PUT", hubDB, nil, nil); st != http.StatusCreated {
		t.Fatalf("create the hub's database: %d", st)
	}
	pulled := testutil.NewBulkDocsCounter(t, root)

	rng := rand.New(rand.NewSource(int64(len(sc.name))))
	gen := func(prefix string, n int) []*couchdoc.Doc { return rtest.Gen(rng, prefix, n, false, false) }
	writeRemote(ctx, t, direct, gen("c", e.docs))
	rtest.WriteRemote(ctx, t, hubDB, gen("h", e.docs))
	writeRemote(ctx, t, direct, gen("both", e.docs/10))
	rtest.WriteRemote(ctx, t, hubDB, gen("both", e.docs/10))

	jobs := map[string]map[string]any{
		"push": {"source": hubDB, "target": cloud, "continuous": true},
		"pull": {"source": cloud, "target": pulled.URL + "/hub", "continuous": true},
	}
	for id, doc := range jobs {
		if sc.interval > 0 {
			doc["checkpoint_interval"] = sc.interval
		}
		if st := testutil.DoJSON(ctx, t, "PUT", root+"/_replicator/"+id, doc, nil); st != http.StatusCreated {
			t.Fatalf("PUT _replicator/%s: %d", id, st)
		}
	}
	start := time.Now()
	mon := watchJobs(ctx, root, []string{"push", "pull"})

	// Writes go on on both sides, the cloud's through a node that stays up.
	stopWrites, writesDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(writesDone)
		wrng := rand.New(rand.NewSource(7))
		for i := 0; ; i++ {
			select {
			case <-stopWrites:
				return
			case <-time.After(200 * time.Millisecond):
			}
			writeRemote(ctx, t, direct, rtest.Gen(wrng, fmt.Sprintf("cw%d-", i), 10, false, false))
			rtest.WriteRemote(ctx, t, hubDB, rtest.Gen(wrng, fmt.Sprintf("hw%d-", i), 10, false, false))
		}
	}()

	// Killed once both jobs recorded a checkpoint: resuming from one is
	// the point.
	for deadline := time.Now().Add(2 * time.Minute); !mon.checkpointed(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint of both jobs 2 min after the start: %v", mon.summary())
		}
	}
	f := hubFigures{Scenario: sc.name, Docs: e.docs, DownMs: sc.down.Milliseconds()}
	control(t, e.kill, killed)
	up := false
	t.Cleanup(func() {
		if !up {
			control(t, e.restart, killed)
		}
	})
	f.KilledAfterMs = time.Since(start).Milliseconds()
	t.Logf("node %d killed %v after the start", killed+1, time.Since(start).Round(time.Millisecond))
	time.Sleep(sc.down)
	control(t, e.restart, killed)
	up = true
	restarted := time.Now()
	t.Logf("node %d answering again %v after the start", killed+1, time.Since(start).Round(time.Millisecond))
	time.Sleep(time.Second)
	close(stopWrites)
	<-writesDone

	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if bad := mon.bad(); bad != "" {
			t.Fatalf("a job left running for good: %s (%v)", bad, mon.summary())
		}
		if mon.allRunning() {
			d := rtest.DiffLeaves(rtest.RemoteLeaves(ctx, t, hubDB), rtest.RemoteLeaves(ctx, t, direct), 5)
			if len(d) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not converged 5 min after the writes stopped:\n  %s", strings.Join(d, "\n  "))
			}
		}
	}
	f.ConvergedMs = time.Since(restarted).Milliseconds()
	time.Sleep(time.Second) // a last look at the states once converged
	mon.stop()
	if bad := mon.bad(); bad != "" {
		t.Errorf("a job left running for good: %s", bad)
	}
	f.States, f.NotRunningMs, f.ErrorCount = mon.figures()
	f.Crashed = crashes(ctx, t, root)

	// Same leaves, bodies and winners; nothing written twice on the hub.
	a, b := rtest.RemoteSnapshot(ctx, t, hubDB), rtest.RemoteSnapshot(ctx, t, direct)
	rtest.RequireEqual(t, "hub vs cluster", a, b)
	ids := slices.Collect(maps.Keys(a))
	if wh, wc := rtest.RemoteWinners(ctx, t, hubDB, ids), rtest.RemoteWinners(ctx, t, direct, ids); !maps.Equal(wh, wc) {
		t.Errorf("winners differ between the hub and the cluster")
	}
	var info struct {
		UpdateSeq int64 `json:"update_seq"`
	}
	if st := testutil.DoJSON(ctx, t, "GET", hubDB, nil, &info); st != http.StatusOK {
		t.Fatalf("hub info: %d", st)
	}
	f.Leaves, f.HubSeq = a.Leaves(), info.UpdateSeq
	if info.UpdateSeq > int64(a.Leaves()) {
		t.Errorf("hub update_seq %d > %d leaves: a revision was written twice", info.UpdateSeq, a.Leaves())
	}
	f.PulledRevs, f.PulledAgain = pulled.Counts()
	return f
}

// crashes counts the "crashed" entries in each job's history.
func crashes(ctx context.Context, t *testing.T, root string) map[string]int {
	var jobs struct {
		Jobs []struct {
			DocID   string `json:"doc_id"`
			History []struct {
				Type string `json:"type"`
			} `json:"history"`
		} `json:"jobs"`
	}
	if st := testutil.DoJSON(ctx, t, "GET", root+"/_scheduler/jobs", nil, &jobs); st != http.StatusOK {
		t.Fatalf("_scheduler/jobs: %d", st)
	}
	out := map[string]int{}
	for _, j := range jobs.Jobs {
		out[j.DocID] += 0
		for _, h := range j.History {
			if h.Type == "crashed" {
				out[j.DocID]++
			}
		}
	}
	return out
}
