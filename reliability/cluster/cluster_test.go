// Package cluster replicates with a live CouchDB cluster while its nodes
// die and come back: opt-in, as it needs the cluster and a way to kill and
// restart its nodes.
//
//	SETTEE_COUCHDB_CLUSTER=http://admin:pw@127.0.0.1:15984,http://...:25984,http://...:35984
//	SETTEE_COUCHDB_CLUSTER_KILL='/path/node.sh kill n{n}'      # {n}: the node's number, 1-based
//	SETTEE_COUCHDB_CLUSTER_RESTART='/path/node.sh start n{n}'  # returns once the node answers
//	SETTEE_COUCHDB_CLUSTER_DOCS=3000                           # documents per scenario
//
// Each scenario runs a continuous pull, push or two-way sync through a
// round-robin balancer in front of every node, or pinned to the node it
// kills; a baseline runs the same without the fault. Afterwards both sides
// hold the same leaves, winners and bodies, no revision was written twice
// locally, the checkpoints are sane, and the replication started again
// resumes from them and reads nothing.
//
// TestClusterHubJobs does the same for a hub (settee serve) whose
// continuous _replicator jobs push to and pull from the cluster: the jobs
// never end (_scheduler/docs states are recorded), both sides converge and
// the hub stores no revision twice.
package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// env is the cluster and its node controls.
type env struct {
	nodes         []string
	kill, restart string
	docs          int
}

func clusterEnv(t *testing.T) env {
	raw := os.Getenv("SETTEE_COUCHDB_CLUSTER")
	if raw == "" {
		t.Skip("SETTEE_COUCHDB_CLUSTER is not set (url,url,url of a CouchDB cluster's nodes, with SETTEE_COUCHDB_CLUSTER_KILL and _RESTART command templates): skipping the live cluster tests")
	}
	e := env{kill: os.Getenv("SETTEE_COUCHDB_CLUSTER_KILL"), restart: os.Getenv("SETTEE_COUCHDB_CLUSTER_RESTART"), docs: 3000}
	for _, n := range strings.Split(raw, ",") {
		e.nodes = append(e.nodes, strings.TrimRight(strings.TrimSpace(n), "/"))
	}
	if len(e.nodes) < 3 || e.kill == "" || e.restart == "" {
		t.Skip("SETTEE_COUCHDB_CLUSTER needs 3 node URLs, SETTEE_COUCHDB_CLUSTER_KILL and SETTEE_COUCHDB_CLUSTER_RESTART: skipping")
	}
	if n, err := strconv.Atoi(os.Getenv("SETTEE_COUCHDB_CLUSTER_DOCS")); err == nil && n > 0 {
		e.docs = n
	}
	return e
}

// control runs a kill or restart command for node i (0-based).
func control(t *testing.T, tmpl string, i int) {
	t.Helper()
	cmd := strings.ReplaceAll(tmpl, "{n}", strconv.Itoa(i+1))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Output to a file, not a pipe: a node started in the background may
	// keep the command's stdout open, and a pipe would wait for it.
	out, err := os.CreateTemp(t.TempDir(), "control")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Stdout, c.Stderr = out, out
	if err := c.Run(); err != nil {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
}

// scenario is one run.
type scenario struct {
	name   string
	dir    string        // pull, push, sync
	pinned bool          // the remote is the killed node, not the balancer
	down   time.Duration // how long the node stays down; 0: no fault
	// killAt is when the node dies, after the start; interval is the
	// replication's CheckpointInterval.
	killAt, interval time.Duration
}

// figures is what a run measured.
type figures struct {
	total, caughtUp            time.Duration // start to converged; restart to caught up
	offline, retries, requests int64
	read, written, checked     int64
	again                      int64 // revisions written again (pull, push)
}

func TestClusterNodeDies(t *testing.T) {
	e := clusterEnv(t)
	const killed = 2 // the third node; writes go on through the first
	// Killed 2.5 s in, with a checkpoint every second: mid-transfer, after
	// the first checkpoints.
	k, d, ci := 2500*time.Millisecond, 3*time.Second, time.Second
	scenarios := []scenario{
		{name: "pull/baseline", dir: "pull", interval: ci},
		{name: "pull/balancer", dir: "pull", down: d, killAt: k, interval: ci},
		{name: "pull/pinned", dir: "pull", pinned: true, down: d, killAt: k, interval: ci},
		{name: "push/baseline", dir: "push", interval: ci},
		{name: "push/balancer", dir: "push", down: d, killAt: k, interval: ci},
		{name: "push/pinned", dir: "push", pinned: true, down: d, killAt: k, interval: ci},
		{name: "sync/baseline", dir: "sync", interval: ci},
		{name: "sync/balancer", dir: "sync", down: d, killAt: k, interval: ci},
		{name: "sync/pinned", dir: "sync", pinned: true, down: d, killAt: k, interval: ci},
		// Down for longer than the default continuous checkpoint interval:
		// checkpoints fall due while the node is away.
		{name: "sync/balancer-long", dir: "sync", down: sync.DefaultContinuousCheckpointInterval + 4*time.Second,
			killAt: sync.DefaultContinuousCheckpointInterval + time.Second},
	}
	base := map[string]figures{}
	var report []string
	for _, sc := range scenarios {
		ok := t.Run(sc.name, func(t *testing.T) {
			f := run(t, e, sc, killed)
			if sc.down == 0 {
				base[sc.dir] = f
			}
			b := base[sc.dir]
			report = append(report, fmt.Sprintf("%-20s docs=%d total=%v restart_to_caught_up=%v offline=%d retried_steps=%d requests=%d revs_checked=%d docs_read=%d written=%d written_again=%d (baseline: total=%v requests=%d revs_checked=%d)",
				sc.name, e.docs, f.total.Round(time.Millisecond), f.caughtUp.Round(time.Millisecond), f.offline, f.retries, f.requests,
				f.checked, f.read, f.written, f.again, b.total.Round(time.Millisecond), b.requests, b.checked))
		})
		if !ok {
			break
		}
	}
	for _, line := range report {
		t.Log(line)
		fmt.Println("cluster:", line)
	}
}

func run(t *testing.T, e env, sc scenario, killed int) figures {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	name := fmt.Sprintf("settee_cluster_%s_%d", strings.ReplaceAll(sc.name, "/", "_"), time.Now().UnixNano()%1e9)
	name = strings.ReplaceAll(name, "-", "_")
	admin := e.nodes[0] + "/" + name
	if st := testutil.DoJSON(ctx, t, "PUT", admin, nil, nil); st != http.StatusCreated && st != http.StatusAccepted {
		t.Fatalf("create %s: %d", name, st)
	}
	t.Cleanup(func() { testutil.DoJSON(context.Background(), t, "DELETE", admin, nil, nil) })
	bal := rtest.NewBalancer(t, e.nodes)
	remoteURL := bal.URL(t, e.nodes[0]) + "/" + name
	if sc.pinned {
		remoteURL = e.nodes[killed] + "/" + name
	}
	local := localdbtest.OpenNamed(t, "local", nil)
	rng := rand.New(rand.NewSource(int64(len(sc.name))))

	// The documents, a few generations deep with conflicts; in sync mode
	// both sides hold some of the same ids with other revisions.
	gen := func(prefix string, n int) []*couchdoc.Doc { return rtest.Gen(rng, prefix, n, false, false) }
	if sc.dir != "push" {
		writeRemote(ctx, t, e.nodes[0]+"/"+name, gen("r", e.docs))
	}
	if sc.dir != "pull" {
		rtest.WriteLocal(ctx, t, local, gen("l", e.docs))
	}
	if sc.dir == "sync" {
		writeRemote(ctx, t, e.nodes[0]+"/"+name, gen("both", e.docs/10))
		rtest.WriteLocal(ctx, t, local, gen("both", e.docs/10))
	}

	remote, err := couch.New(remoteURL, &couch.Options{Timeout: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var offline, lastIdle atomic.Int64
	var offlineMu gosync.Mutex
	offlineBy := map[string]int{} // by direction ("" for pull and push)
	opts := sync.Options{Continuous: true, Heartbeat: time.Second, Retries: 3, RetryDelay: 100 * time.Millisecond, MaxRetryDelay: 2 * time.Second,
		CheckpointInterval: sc.interval,
		OnEvent: func(ev sync.Event) {
			if ev.Kind != sync.EventState {
				return
			}
			if ev.State == sync.StateOffline && offline.Load() < 3 {
				t.Logf("%s offline: %v", ev.Replication, ev.Err)
			}
			switch ev.State {
			case sync.StateOffline:
				offline.Add(1)
				offlineMu.Lock()
				offlineBy[ev.Replication]++
				offlineMu.Unlock()
			case sync.StateIdle:
				lastIdle.Store(time.Now().UnixNano())
			}
		}}
	lp := localpeer.New(local)
	newRep := func() *sync.Replicator {
		o := opts
		var rep *sync.Replicator
		var err error
		switch sc.dir {
		case "pull":
			o.Source, o.Target = remote, lp
			rep, err = sync.New(o)
		case "push":
			o.Source, o.Target = lp, remote
			rep, err = sync.New(o)
		default:
			rep, err = sync.NewSync(lp, remote, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := newRep()
	start := time.Now()
	if err := rep.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ended := func() {
		select {
		case <-rep.Done():
			t.Fatalf("the continuous %s ended: %v", sc.dir, rep.Wait())
		default:
		}
	}

	// Writes go on, on the source side(s), through a node that stays up.
	stopWrites := make(chan struct{})
	writesDone := make(chan struct{})
	go func() {
		defer close(writesDone)
		wrng := rand.New(rand.NewSource(7))
		for i := 0; ; i++ {
			select {
			case <-stopWrites:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if sc.dir != "push" {
				writeRemote(ctx, t, e.nodes[0]+"/"+name, rtest.Gen(wrng, fmt.Sprintf("rw%d-", i), 10, false, false))
			}
			if sc.dir != "pull" {
				rtest.WriteLocal(ctx, t, local, rtest.Gen(wrng, fmt.Sprintf("lw%d-", i), 10, false, false))
			}
		}
	}()

	var restarted time.Time
	if sc.down > 0 {
		time.Sleep(sc.killAt)
		// Killed once every direction recorded a checkpoint: the point is
		// to resume from one (before it, starting over is right).
		for deadline := time.Now().Add(time.Minute); !checkpointed(rep.Status()); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no checkpoint a minute after the start")
			}
		}
		ended()
		control(t, e.kill, killed)
		up := false
		t.Cleanup(func() {
			if !up { // the test failed with the node down: others share it
				control(t, e.restart, killed)
			}
		})
		t.Logf("node %d killed %v after the start", killed+1, time.Since(start).Round(time.Millisecond))
		time.Sleep(sc.down)
		ended()
		control(t, e.restart, killed)
		up, restarted = true, time.Now()
		t.Logf("node %d answering again %v after the start", killed+1, time.Since(start).Round(time.Millisecond))
	} else {
		time.Sleep(1500 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(stopWrites)
	<-writesDone

	// Converged: idle, and the same leaves on both sides (bounded).
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		ended()
		if rep.Status().State == sync.StateIdle {
			d := rtest.DiffLeaves(rtest.LocalLeaves(ctx, t, local), rtest.RemoteLeaves(ctx, t, e.nodes[0]+"/"+name), 5)
			if len(d) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not converged 5 min after the writes stopped:\n  %s", strings.Join(d, "\n  "))
			}
		}
	}
	f := figures{offline: offline.Load(), requests: remote.Stats().Requests}
	idle := time.Unix(0, lastIdle.Load())
	f.total = idle.Sub(start)
	if !restarted.IsZero() {
		f.caughtUp = max(0, idle.Sub(restarted))
	}
	if err := rep.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	results := rep.Results()
	names := []string{""}
	if sc.dir == "sync" {
		names = []string{"push", "pull"}
	}
	for i, r := range results {
		f.retries += r.Retries
		f.read += r.Stats.DocsRead
		f.written += r.Stats.DocsWritten
		f.checked += r.Stats.MissingChecked
		if r.Stats.DocWriteFailures != 0 {
			t.Errorf("%d document write failures", r.Stats.DocWriteFailures)
		}
		// A direction that went offline (after its first checkpoint)
		// resumed from a checkpoint, never from 0.
		offlineMu.Lock()
		went := offlineBy[names[i]]
		offlineMu.Unlock()
		if went > 0 && len(r.StartSeq) == 0 {
			t.Errorf("%s: the session after going offline %d times started from 0, not from a checkpoint", names[i], went)
			for _, p := range []sync.Peer{remote, lp} {
				raw, err := p.GetLocal(ctx, r.ReplicationID)
				t.Logf("log on %s: %.600s %v", p, raw, err)
			}
		}
	}

	// Same leaves, bodies and winners; nothing written twice locally.
	a, b := rtest.LocalSnapshot(ctx, t, local), rtest.RemoteSnapshot(ctx, t, e.nodes[0]+"/"+name)
	rtest.RequireEqual(t, "local vs cluster", a, b)
	wl := rtest.LocalWinners(ctx, t, local)
	ids := make([]string, 0, len(wl))
	for id := range wl {
		ids = append(ids, id)
	}
	if wr := rtest.RemoteWinners(ctx, t, e.nodes[0]+"/"+name, ids); !maps.Equal(wl, wr) {
		t.Errorf("winners differ between the local store and the cluster")
	}
	info, err := local.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.UpdateSeq > int64(a.Leaves()) {
		t.Errorf("local update_seq %d > %d leaves: a revision was written twice", info.UpdateSeq, a.Leaves())
	}
	// A revision the replicator wrote again (a feed re-read after a
	// failure repeats changes while earlier batches are still in flight)
	// changes nothing in the target: the update_seq check above is the
	// proof. How many were written again is reported.
	if sc.dir != "sync" {
		f.again = max(0, f.written-int64(a.Leaves()))
	}

	// Checkpoints: sane on both sides, and the same replication started
	// again resumes from them and reads nothing.
	clean, err := couch.New(e.nodes[0]+"/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		src, tgt := sync.Peer(clean), sync.Peer(lp)
		if sc.dir == "push" || sc.dir == "sync" && i == 0 {
			src, tgt = lp, clean
		}
		checkLogs(ctx, t, r.ReplicationID, src, tgt)
	}
	again := newRep()
	if err := again.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); again.Status().State != sync.StateIdle; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("started again: not idle after a minute: %+v", again.Status())
		}
	}
	if err := again.Stop(); err != nil {
		t.Fatal(err)
	}
	for i, r := range again.Results() {
		if len(r.StartSeq) == 0 || string(r.StartSeq) != string(results[i].LastSeq) || r.Stats.DocsRead != 0 {
			t.Errorf("started again: from %.40s (want the checkpoint %.40s), read %d documents", r.StartSeq, results[i].LastSeq, r.Stats.DocsRead)
		}
	}
	return f
}

// checkpointed reports whether every direction recorded a checkpoint.
func checkpointed(st sync.Status) bool {
	if len(st.Directions) == 0 {
		return len(st.CheckpointedSeq) > 0
	}
	for _, d := range st.Directions {
		if len(d.CheckpointedSeq) == 0 {
			return false
		}
	}
	return true
}

// checkLogs checks that both replication logs exist and agree (the same
// session and sequence). rtest.CheckCheckpoints cannot be used: a
// cluster's sequences are encoded differently by whichever shard copies
// answer, so a checkpoint is not found verbatim in a later feed; that it is
// not ahead of the target shows in the replication started again, which
// reads nothing while both sides are equal.
func checkLogs(ctx context.Context, t *testing.T, id string, src, tgt sync.Peer) {
	t.Helper()
	var logs [2]sync.ReplicationLog
	for i, p := range []sync.Peer{src, tgt} {
		raw, err := p.GetLocal(ctx, id)
		if err != nil {
			t.Fatalf("replication log %s on %s: %v", id, p, err)
		}
		if err := json.Unmarshal(raw, &logs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if logs[0].SessionID != logs[1].SessionID || string(logs[0].SourceLastSeq) != string(logs[1].SourceLastSeq) {
		t.Errorf("replication logs differ: source %s at %.40s, target %s at %.40s",
			logs[0].SessionID, logs[0].SourceLastSeq, logs[1].SessionID, logs[1].SourceLastSeq)
	}
}

// writeRemote writes docs with _bulk_docs new_edits=false, accepting a
// cluster's 202 (written, quorum not met while a node is down) and
// retrying refused requests a few times.
func writeRemote(ctx context.Context, t *testing.T, dbURL string, docs []*couchdoc.Doc) {
	t.Helper()
	for len(docs) > 0 {
		n := min(len(docs), 200)
		body := map[string]any{"new_edits": false, "docs": docs[:n]}
		var res []couchdoc.DocResult
		var st int
		for attempt := 0; attempt < 10; attempt++ {
			if st = doJSON(ctx, "POST", dbURL+"/_bulk_docs", body, &res); st == http.StatusCreated || st == http.StatusAccepted {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if st != http.StatusCreated && st != http.StatusAccepted {
			t.Fatalf("write to the cluster: status %d", st)
		}
		for _, r := range res {
			if r.Error != "" {
				t.Fatalf("write %q to the cluster: %s: %s", r.ID, r.Error, r.Reason)
			}
		}
		docs = docs[n:]
	}
}

// doJSON is one JSON request; 0 when it got no answer.
func doJSON(ctx context.Context, method, u string, body, out any) int {
	b, err := json.Marshal(body)
	if err != nil {
		return 0
	}
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(string(b)))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if json.NewDecoder(resp.Body).Decode(out) != nil && resp.StatusCode < 300 {
		return 0
	}
	return resp.StatusCode
}
