package server

import (
	"testing"
	"time"

	"github.com/settee/settee/internal/testutil"
)

// TestReplicatorRotation: with more continuous jobs than MaxJobs, the
// scheduler rotates them every interval, as CouchDB's max_churn: each
// gets its turn (running, then pending again) and each target receives
// what is written to the source while the jobs take turns.
func TestReplicatorRotation(t *testing.T) {
	ts := newReplHub(t, Config{MaxJobs: 1, ReplicationInterval: 300 * time.Millisecond})
	ts.must(201, "PUT", "/src", nil)
	ids := []string{"r1", "r2", "r3"}
	for _, id := range ids {
		ts.must(201, "PUT", "/_replicator/"+id, map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("t" + id), "create_target": true, "continuous": true})
	}
	seen := map[string]bool{}
	testutil.Eventually(t, "every job runs in turn", func() bool {
		running := 0
		for _, id := range ids {
			if d := ts.schedDoc(id); d != nil && d["state"] == "running" {
				seen[id] = true
				running++
			}
		}
		if running > 1 {
			t.Fatalf("%d jobs run at once, MaxJobs 1", running)
		}
		return len(seen) == len(ids)
	})
	ts.putDoc("src", "late", map[string]any{"n": 1})
	for _, id := range ids {
		testutil.Eventually(t, "t"+id+" gets the late document", func() bool { return ts.do("GET", "/t"+id+"/late", nil).status == 200 })
	}
	var hist []any
	testutil.Eventually(t, "a job's history shows it stopped to make way", func() bool {
		jobs, _ := ts.must(200, "GET", "/_scheduler/jobs", nil).json(t)["jobs"].([]any)
		for _, j := range jobs {
			hist, _ = j.(map[string]any)["history"].([]any)
			for _, h := range hist {
				if h.(map[string]any)["type"] == "stopped" {
					return true
				}
			}
		}
		return false
	})
}

// TestReplicatorMaxJobs: past MaxJobs a job waits, pending, and starts
// when a running one goes.
func TestReplicatorMaxJobs(t *testing.T) {
	ts := newReplHub(t, Config{MaxJobs: 1})
	ts.must(201, "PUT", "/src", nil)
	ts.putDoc("src", "d", map[string]any{"n": 1})
	ts.must(201, "PUT", "/_replicator/a", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("ta"), "create_target": true, "continuous": true})
	ts.waitSchedState("a", "running")
	ts.must(201, "PUT", "/_replicator/b", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("tb"), "create_target": true, "continuous": true})
	ts.waitSchedState("b", "pending")
	if d := ts.schedDoc("a"); d["state"] != "running" {
		t.Errorf("a: %v", d)
	}
	rev := ts.must(200, "GET", "/_replicator/a", nil).json(t)["_rev"].(string)
	ts.must(200, "DELETE", "/_replicator/a?rev="+rev, nil)
	ts.waitSchedState("b", "running")
	testutil.Eventually(t, "b copies the source", func() bool { return ts.do("GET", "/tb", nil).status == 200 && ts.docCount("tb") == 1 })
}
