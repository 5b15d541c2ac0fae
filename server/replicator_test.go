package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/testutil"
)

// newReplHub is a hub whose scheduler stops before its HTTP server (its
// jobs hold feeds of that server open) and retries crashed jobs soon.
func newReplHub(t *testing.T, cfg Config) *tserver {
	t.Helper()
	if cfg.ReplicationRetryDelay == 0 {
		cfg.ReplicationRetryDelay = 100 * time.Millisecond
	}
	ts := newHub(t, cfg)
	t.Cleanup(func() {
		if err := ts.s.sched.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

// dbURL is a database's URL with the admin's credentials, as a
// replication document names it.
func (ts *tserver) dbURL(name string) string {
	return strings.Replace(ts.url, "http://", "http://admin:adminpw@", 1) + "/" + name
}

// schedDoc is the document's _scheduler/docs entry.
func (ts *tserver) schedDoc(id string) map[string]any {
	ts.t.Helper()
	r := ts.do("GET", "/_scheduler/docs/_replicator/"+id, nil)
	if r.status != 200 {
		return nil
	}
	return r.json(ts.t)
}

func (ts *tserver) waitSchedState(id, state string) map[string]any {
	ts.t.Helper()
	var last map[string]any
	testutil.Eventually(ts.t, id+" in state "+state, func() bool {
		last = ts.schedDoc(id)
		return last != nil && last["state"] == state
	})
	return last
}

func (ts *tserver) docCount(db string) float64 {
	ts.t.Helper()
	return ts.must(200, "GET", "/"+db, nil).json(ts.t)["doc_count"].(float64)
}

// TestReplicatorContinuousJob: a continuous replication document starts
// a job that copies the source and follows it; _scheduler/jobs,
// _scheduler/docs and _active_tasks report it in CouchDB's shapes with
// no credentials; deleting the document stops the job.
func TestReplicatorContinuousJob(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.must(201, "PUT", "/src", nil)
	ts.must(201, "PUT", "/tgt", nil)
	for i := range 10 {
		ts.putDoc("src", fmt.Sprintf("d%02d", i), map[string]any{"n": i})
	}
	ts.must(201, "PUT", "/_replicator/up", map[string]any{
		"source": ts.dbURL("src"), "target": map[string]any{"url": ts.url + "/tgt",
			"auth": map[string]any{"basic": map[string]any{"username": "admin", "password": "adminpw"}}},
		"continuous": true})
	testutil.Eventually(t, "the target has the 10 documents", func() bool { return ts.docCount("tgt") == 10 })
	ts.putDoc("src", "later", map[string]any{"n": 99})
	testutil.Eventually(t, "a later write arrives", func() bool { return ts.docCount("tgt") == 11 })

	doc := ts.waitSchedState("up", "running")
	id, _ := doc["id"].(string)
	if !strings.HasSuffix(id, "+continuous") || doc["source"] != ts.url+"/src/" || doc["target"] != ts.url+"/tgt/" {
		t.Errorf("_scheduler/docs entry %v", doc)
	}
	stored := ts.must(200, "GET", "/_replicator/up", nil).json(t)
	if stored["owner"] != "admin" {
		t.Errorf("stored document %v has no owner", stored)
	}
	jobs := ts.must(200, "GET", "/_scheduler/jobs", nil)
	if strings.Contains(string(jobs.body), "adminpw") {
		t.Errorf("_scheduler/jobs shows a password: %s", jobs.body)
	}
	var list struct {
		TotalRows int              `json:"total_rows"`
		Jobs      []map[string]any `json:"jobs"`
	}
	if err := jsonUnmarshal(jobs.body, &list); err != nil || list.TotalRows != 1 || list.Jobs[0]["id"] != id || list.Jobs[0]["doc_id"] != "up" {
		t.Fatalf("_scheduler/jobs: %s", jobs.body)
	}
	ts.must(200, "GET", "/_scheduler/jobs/"+strings.ReplaceAll(id, "+", "%2B"), nil)
	ts.wantReason(404, "not_found", "missing", "GET", "/_scheduler/jobs/nope", nil)
	var tasks []map[string]any
	testutil.Eventually(t, "_active_tasks counts the writes", func() bool {
		r := ts.must(200, "GET", "/_active_tasks", nil)
		tasks = nil
		return jsonUnmarshal(r.body, &tasks) == nil && len(tasks) == 1 && tasks[0]["docs_written"] == float64(11)
	})
	if tasks[0]["type"] != "replication" || tasks[0]["replication_id"] != id || tasks[0]["continuous"] != true {
		t.Errorf("_active_tasks: %v", tasks)
	}

	rev := stored["_rev"].(string)
	ts.must(200, "DELETE", "/_replicator/up?rev="+rev, nil)
	testutil.Eventually(t, "the job is gone", func() bool {
		return ts.schedDoc("up") == nil && strings.Contains(string(ts.must(200, "GET", "/_scheduler/jobs", nil).body), `"total_rows":0`)
	})
	ts.putDoc("src", "after", map[string]any{"n": 100})
	time.Sleep(300 * time.Millisecond) // a job that still ran would copy it by now
	if n := ts.docCount("tgt"); n != 11 {
		t.Errorf("the target has %v documents after the job stopped, want 11", n)
	}
}
