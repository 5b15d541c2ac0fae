package main

import (
	"strings"
	"testing"
	"time"
)

// TestReplicatorPhase runs the replicator phase on settee serve alone
// (no -couch) with 3 databases and short windows: the jobs catch up, the
// hub is measured with and without them, every timed write arrives
// upstream, and the table shows the hub.
func TestReplicatorPhase(t *testing.T) {
	h := runHarness(t, 5*time.Minute, "-phases", "replicator", "-repl-dbs", "3", "-repl-seconds", "2",
		"-repl-baseline-seconds", "1", "-repl-samples", "4")
	if len(h.res.Errors) > 0 {
		t.Fatalf("errors: %q", h.res.Errors)
	}
	if len(h.res.Replicator) != 1 {
		t.Fatalf("replicator runs: %+v, want settee serve's alone", h.res.Replicator)
	}
	r := h.res.Replicator[0]
	if r.Hub != "settee serve" || r.DBs != 3 || r.Samples != 4 {
		t.Errorf("run %+v: want settee serve, 3 dbs, 4 samples", r)
	}
	if r.Seconds < 2 || r.BaselineSeconds < 1 || r.CPUSeconds <= 0 || r.RSS <= 0 || r.Wakeups <= 0 {
		t.Errorf("implausible idle figures %+v", r)
	}
	if r.LatencyP50Ms <= 0 || r.LatencyP99Ms < r.LatencyP50Ms || r.LatencyMaxMs < r.LatencyP99Ms {
		t.Errorf("implausible latencies %+v", r)
	}
	if !strings.Contains(h.stdout, "| _replicator hub") || strings.Contains(h.stdout, "settee / couchdb") {
		t.Errorf("table: want settee serve's row and no ratio without CouchDB:\n%s", h.stdout)
	}
}
