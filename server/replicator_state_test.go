package server

import (
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
)

// TestReplicatorTerminalStates: the scheduler writes CouchDB 3.5's
// terminal states into the documents and reads its own writes back
// without writing again: a completed one-shot gets _replication_state
// "completed" with its stats (and start_time); a duplicate of another
// document's replication, and a body the scheduler refuses (one that came
// into the store without the server's checks), get "failed" with the
// reason, and stay failed after the other document is gone; an older
// CouchDB's "triggered" state is cleared and the document runs.
func TestReplicatorTerminalStates(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.must(201, "PUT", "/src", nil)
	ts.must(201, "PUT", "/tgt", nil)
	ts.putDoc("src", "d0", map[string]any{"n": 0})
	cont := map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("tgt"), "continuous": true}
	ts.must(201, "PUT", "/_replicator/cont", cont)
	contID := ts.waitSchedState("cont", "running")["id"].(string)
	ts.must(201, "PUT", "/_replicator/dup", cont)
	ts.must(201, "PUT", "/_replicator/once", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("once"), "create_target": true})
	ts.must(201, "PUT", "/_replicator/old", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("old"), "create_target": true,
		"continuous": true, "_replication_state": "triggered", "_replication_id": "x", "_replication_stats": map[string]any{}})
	// A body the server refuses, put in the store as an outside writer
	// (or an older version) could.
	db, err := ts.s.dbs.get(t.Context(), ReplicatorDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(t.Context(), &couchdoc.Doc{ID: "bad", Body: []byte(`{"source":"http://127.0.0.1:1/a","target":"http://127.0.0.1:1/b","continuous":"yes"}`)}); err != nil {
		t.Fatal(err)
	}
	ts.s.sched.Kick()

	stored := func(id string) map[string]any { return ts.must(200, "GET", "/_replicator/"+id, nil).json(t) }
	waitStored := func(id, state string) map[string]any {
		var doc map[string]any
		testutil.Eventually(t, id+" records "+state, func() bool {
			doc = stored(id)
			return doc["_replication_state"] == state
		})
		return doc
	}
	once := waitStored("once", "completed")
	stats, _ := once["_replication_stats"].(map[string]any)
	if stats["docs_written"] != float64(1) || stats["start_time"] == nil || once["_replication_state_time"] == nil {
		t.Errorf("completed document %v", once)
	}
	dup := waitStored("dup", "failed")
	want := "Replication `" + contID + "` specified by document `dup` already started, triggered by document `cont` from db `_replicator`"
	if dup["_replication_state_reason"] != want || dup["_replication_state_time"] == nil {
		t.Errorf("duplicate document %v, want reason %q", dup, want)
	}
	bad := waitStored("bad", "failed")
	if r, _ := bad["_replication_state_reason"].(string); !strings.Contains(r, "`continuous` must be a boolean") {
		t.Errorf("refused document %v", bad)
	}
	testutil.Eventually(t, "the old state is cleared and the document runs", func() bool {
		doc := stored("old")
		d := ts.schedDoc("old")
		return doc["_replication_state"] == nil && doc["_replication_id"] == nil && doc["_replication_stats"] == nil && d != nil && d["state"] == "running"
	})
	// Reported from what the documents say, as CouchDB reads them.
	if d := ts.schedDoc("bad"); d == nil || d["state"] != "failed" || !strings.Contains(d["info"].(map[string]any)["error"].(string), "must be a boolean") {
		t.Errorf("_scheduler/docs of the refused document: %v", d)
	}

	// Gone with its document, the replication is not taken over: the
	// duplicate stays failed, as in CouchDB.
	ts.must(200, "DELETE", "/_replicator/cont?rev="+stored("cont")["_rev"].(string), nil)
	// A last document, once running, shows that the scheduler has read
	// everything before it, its own writes included.
	ts.must(201, "PUT", "/_replicator/last", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("last"), "create_target": true, "continuous": true})
	ts.waitSchedState("last", "running")
	ts.s.sched.Kick()
	ts.waitSchedState("dup", "failed")
	for id, gen := range map[string]string{"once": "2-", "dup": "2-", "bad": "2-", "old": "2-"} {
		if rev := stored(id)["_rev"].(string); !strings.HasPrefix(rev, gen) {
			t.Errorf("%s is at revision %s: the scheduler wrote it more than once", id, rev)
		}
	}
}

// TestReplicatorMissingFilter: as CouchDB's doc processor, a document
// whose filter is not in its source is in the error state with CouchDB's
// reason and has no job; it is retried, and runs once the filter is
// there.
func TestReplicatorMissingFilter(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.must(201, "PUT", "/src", nil)
	ts.putDoc("src", "a", map[string]any{"type": "x"})
	ts.putDoc("src", "b", map[string]any{"type": "y"})
	ts.must(201, "PUT", "/_replicator/f", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("ftgt"),
		"create_target": true, "continuous": true, "filter": "f/by_type", "query_params": map[string]string{"type": "x"}})
	d := ts.waitSchedState("f", "error")
	src := ts.url + "/src/"
	want := "Couldn't open document `_design/f` from source database `" + src + "`: {error,<<\"not_found\">>}"
	if info, _ := d["info"].(map[string]any); info["error"] != want || d["id"] != nil || d["source"] != nil {
		t.Errorf("entry %v, want error %q", d, want)
	}
	if jobs := ts.must(200, "GET", "/_scheduler/jobs", nil).json(t); jobs["total_rows"] != float64(0) {
		t.Errorf("a document without its filter has a job: %v", jobs)
	}
	ts.putDoc("src", "_design/f", map[string]any{"filters": map[string]string{"other": "function(doc) { return true; }"}})
	testutil.Eventually(t, "a design document without the filter", func() bool {
		info, _ := ts.schedDoc("f")["info"].(map[string]any)
		r, _ := info["error"].(string)
		return strings.HasPrefix(r, "Couldn't parse filter code from document f on `"+src+"`")
	})
	rev := ts.must(200, "GET", "/src/_design/f", nil).json(t)["_rev"].(string)
	ts.must(201, "PUT", "/src/_design/f?rev="+rev, map[string]any{"filters": map[string]string{
		"by_type": "function(doc, req) { return doc.type === req.query.type; }"}})
	ts.waitSchedState("f", "running")
	testutil.Eventually(t, "the filtered job copies a alone", func() bool {
		r := ts.do("GET", "/ftgt/a", nil)
		return r.status == 200
	})
	ts.wantError(404, "not_found", "GET", "/ftgt/b", nil)
}
