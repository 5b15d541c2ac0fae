package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/internal/couchcorpus"
)

// replicatorUsersDifferences are the exchanges of replicator-users.jsonl
// (_replicator with users: owners, user_ctx, hidden credentials) where
// Settee answers otherwise than CouchDB 3.5, with the reason. The replay
// fails on any other difference, and on a listed one that no longer
// differs.
var replicatorUsersDifferences = map[string][]string{}

// TestCouchDB35ReplicatorUsers replays replicator-users.json, CouchDB
// 3.5's _replicator used by users who are not admins, and compares step
// by step: statuses, error names and reasons; documents member by member
// (values too, but times and the stats' values, which are CouchDB's own);
// whether a document is shown with its stored revision or a made-up one
// (each side's stored revisions are learnt from its own answers: writes,
// and reads by an admin or the owner); the _scheduler entries as
// TestCouchDB35Scheduler compares them.
func TestCouchDB35ReplicatorUsers(t *testing.T) {
	t.Parallel()
	want, have := map[string]string{}, map[string]string{} // stored revisions by document
	// r-vic-ctx names the replication r-vic runs (the same endpoints and
	// credentials: user_ctx is not part of a replication id). The
	// recording CouchDB read it once r-vic had completed (its jobs start
	// after up to 5 s of startup_jitter, and its documents were read
	// then), so it ran and completed too; read while r-vic runs, it is a
	// duplicate and fails, CouchDB's own rule. The replay lets r-vic end
	// first, as it did there.
	waits := map[string]*schedWait{"PUT /_replicator/r-vic-ctx": {Path: "/_scheduler/docs/_replicator/r-vic", Field: "state", Value: "completed"}}
	replaySchedScript(t, "replicator-users", waits, replicatorUsersDifferences, "replicatorUsersDifferences",
		func(e *couchcorpus.Exchange, as string, status int, got []byte, fill func(string) string) []string {
			if strings.HasPrefix(e.Path, "/_scheduler/") || e.Path == "/_active_tasks" {
				return schedulerDiffs(e, status, got, fill)
			}
			return replicatorUsersDiffs(e, as, status, got, fill, want, have)
		})
}

func replicatorUsersDiffs(e *couchcorpus.Exchange, as string, status int, got []byte, fill func(string) string, wantRevs, haveRevs map[string]string) []string {
	var diffs []string
	if status != e.Status {
		diffs = append(diffs, fmt.Sprintf("status %d, CouchDB %d", status, e.Status))
	}
	var want, have map[string]any
	if json.Unmarshal([]byte(fill(e.RespBody)), &want) != nil || json.Unmarshal(got, &have) != nil {
		return diffs
	}
	if want["error"] != nil {
		if have["error"] != want["error"] || e.Status != 400 && have["reason"] != want["reason"] {
			diffs = append(diffs, fmt.Sprintf("error %v %q, CouchDB %v %q", have["error"], have["reason"], want["error"], want["reason"]))
		}
		return diffs
	}
	segs := strings.Split(strings.Trim(e.Path, "/"), "/")
	isDoc := len(segs) == 2 && segs[0] == "_replicator" && !strings.HasPrefix(segs[1], "_")
	switch {
	case isDoc && e.Method == "PUT":
		if !reflect.DeepEqual(keys(want), keys(have)) || want["id"] != have["id"] {
			diffs = append(diffs, fmt.Sprintf("answer %v, CouchDB %v", have, want))
		}
		wantRevs[segs[1]], _ = want["rev"].(string)
		haveRevs[segs[1]], _ = have["rev"].(string)
	case isDoc && e.Method == "GET":
		id := segs[1]
		shown := func(doc map[string]any, revs map[string]string) string {
			rev, _ := doc["_rev"].(string)
			gen, _, _ := strings.Cut(rev, "-")
			if owner, _ := doc["owner"].(string); as == "admin" || as != "" && as == owner {
				defer func() { revs[id] = rev }()
			}
			return fmt.Sprintf("generation %s, stored revision %v", gen, rev == revs[id])
		}
		if w, h := shown(want, wantRevs), shown(have, haveRevs); w != h {
			diffs = append(diffs, fmt.Sprintf("_rev: %s, CouchDB %s", h, w))
		}
		if w, h := comparableDoc(want), comparableDoc(have); !reflect.DeepEqual(w, h) {
			diffs = append(diffs, fmt.Sprintf("document %v, CouchDB %v", h, w))
		}
	default:
		// Revisions are each server's own hashes: their generations count.
		for _, m := range []map[string]any{want, have} {
			if rev, ok := m["rev"].(string); ok {
				m["rev"], _, _ = strings.Cut(rev, "-")
			}
		}
		if !reflect.DeepEqual(want, have) {
			diffs = append(diffs, fmt.Sprintf("answer %v, CouchDB %v", have, want))
		}
	}
	return diffs
}

// comparableDoc is a replication document without what is each server's
// own: its _rev (compared as a relation), its state's time and its
// stats' values (their members are compared).
func comparableDoc(doc map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range doc {
		switch k {
		case "_rev":
		case "_replication_state_time":
			out[k] = "<time>"
		case "_replication_stats":
			m, _ := v.(map[string]any)
			out[k] = keys(m)
		default:
			out[k] = v
		}
	}
	return out
}
