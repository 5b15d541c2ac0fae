package server

import (
	"fmt"
	"net/http/httptest"
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

// TestReplicatorDocRefused: replication documents CouchDB 3.5 refuses
// are refused with its status and reason, and nothing is stored; those
// it takes are stored with their writer as owner.
func TestReplicatorDocRefused(t *testing.T) {
	ts := newReplHub(t, Config{})
	src, tgt := "http://127.0.0.1:1/src", "http://127.0.0.1:1/tgt"
	for i, c := range []struct {
		body   string
		reason string
	}{
		{`{"source":"src","target":"tgt"}`, "local_endpoints_not_supported"},
		{`{"source":"` + src + `"}`, "Missing replicator database"},
		{`{"target":"` + tgt + `"}`, "Missing replicator database"},
		{`{"source":"` + src + `","target":"` + tgt + `","continuous":"yes"}`, "{throw,{bad_request,<<\"parameter `continuous` must be a boolean\">>}}"},
		{`{"source":"` + src + `","target":"` + tgt + `","create_target":1}`, "{throw,{bad_request,<<\"parameter `create_target` must be a boolean\">>}}"},
		{`{"source":"` + src + `","target":"` + tgt + `","doc_ids":"d01"}`, "{throw,{bad_request,<<\"parameter `doc_ids` must be an array\">>}}"},
		{`{"source":"` + src + `","target":"` + tgt + `","filter":1}`, "{error,badarg}"},
		{`{"source":"` + src + `","target":"` + tgt + `","selector":[]}`, "{throw,{bad_request,<<\"parameter `selector` must be a JSON object\">>}}"},
		{`{"source":"` + src + `","target":"` + tgt + `","selector":{},"doc_ids":["a"]}`, "{throw,{bad_request,\"`doc_ids`,`filter`,`selector` are mutually exclusive\"}}"},
		{`{"source":"` + src + `","target":"` + tgt + `","filter":"a/b","query_params":1}`, "{throw,{bad_request,<<\"parameter `query_params` must be an object\">>}}"},
		{`{"source":"ftp://127.0.0.1/x","target":"` + tgt + `"}`, "local_endpoints_not_supported"},
		{`{"source":{"auth":{"basic":{"username":"a","password":"b"}}},"target":"` + tgt + `"}`, "endpoint has an invalid url"},
		{`{"source":"` + src + `","target":"` + tgt + `","worker_batch_size":"x"}`, "{error,badarg}"},
	} {
		ts.wantReason(403, "forbidden", c.reason, "PUT", fmt.Sprintf("/_replicator/bad%d", i), c.body)
		ts.wantReason(404, "not_found", "missing", "GET", fmt.Sprintf("/_replicator/bad%d", i), nil)
		r := ts.must(201, "POST", "/_replicator/_bulk_docs", `{"docs":[`+c.body+`]}`)
		if !strings.Contains(string(r.body), `"error":"forbidden"`) {
			t.Errorf("_bulk_docs took %s: %s", c.body, r.body)
		}
	}
	ts.wantReason(400, "bad_request", "Document must be a JSON object", "PUT", "/_replicator/bad", `[]`)
	// Accepted as CouchDB takes them (the hosts are unreachable: crashing).
	for i, body := range []string{
		`{"source":"` + src + `","target":"` + tgt + `","checkpoint_interval":-1}`,
		`{"source":"` + src + `","target":"` + tgt + `","since_seq":"0","use_checkpoints":false,"colour":"red"}`,
		`{"source":"` + src + `","target":"` + tgt + `","user_ctx":{"name":"bob","roles":[]}}`,
		`{"source":{"url":"` + src + `","auth":{"session":{"username":"u","password":"p"}}},"target":"` + tgt + `","continuous":true}`,
		`{"source":{"url":"` + src + `","headers":{"Authorization":"Basic YWRtaW46cHc="}},"target":"` + tgt + `","create_target":true}`,
	} {
		ts.must(201, "PUT", fmt.Sprintf("/_replicator/ok%d", i), body)
	}
	// A user who is not an admin cannot write to the stock _replicator.
	ts.createUser("bob", "bobpw", nil)
	ts.user, ts.pass = "bob", "bobpw"
	ts.wantReason(403, "forbidden", "You are not allowed to access this db.", "PUT", "/_replicator/bob", `{"source":"`+src+`","target":"`+tgt+`"}`)
	ts.wantReason(401, "unauthorized", "You are not a server admin.", "GET", "/_scheduler/docs", nil)
	ts.wantReason(401, "unauthorized", "You are not a server admin.", "GET", "/_active_tasks", nil)
	ts.user, ts.pass = "", ""
	ts.wantReason(401, "unauthorized", "You are not a server admin.", "GET", "/_scheduler/jobs", nil)
	ts.wantReason(401, "unauthorized", "You are not authorized to access this db.", "PUT", "/_replicator/anon", `{"source":"`+src+`","target":"`+tgt+`"}`)
}

// TestReplicatorOneShotAndFaults: a one-shot document completes, is
// marked completed in its document (and not run again), a duplicate of a
// running replication fails with CouchDB's reason, and jobs that cannot
// work (unreachable source, missing target, wrong password) crash with a
// reason and keep being retried without disturbing the good job.
func TestReplicatorOneShotAndFaults(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.must(201, "PUT", "/src", nil)
	ts.must(201, "PUT", "/tgt", nil)
	for i := range 5 {
		ts.putDoc("src", fmt.Sprintf("d%d", i), map[string]any{"n": i})
	}
	cont := map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("tgt"), "continuous": true}
	ts.must(201, "PUT", "/_replicator/cont", cont)
	ts.must(201, "PUT", "/_replicator/dup", cont)
	ts.must(201, "PUT", "/_replicator/once", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("once"), "create_target": true})
	ts.must(201, "PUT", "/_replicator/badhost", map[string]any{"source": "http://127.0.0.1:1/nope", "target": ts.dbURL("tgt"), "continuous": true})
	ts.must(201, "PUT", "/_replicator/notarget", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("nope")})
	ts.must(201, "PUT", "/_replicator/badauth", map[string]any{"source": strings.Replace(ts.dbURL("src"), "admin:adminpw", "ghost:gh0st-secret", 1), "target": ts.dbURL("tgt")})

	done := ts.waitSchedState("once", "completed")
	if info, _ := done["info"].(map[string]any); info["docs_written"] != float64(5) || done["id"] != nil {
		t.Errorf("completed entry %v", done)
	}
	testutil.Eventually(t, "the document records its completion", func() bool {
		return ts.must(200, "GET", "/_replicator/once", nil).json(t)["_replication_state"] == "completed"
	})
	if n := ts.docCount("once"); n != 5 {
		t.Errorf("one-shot target has %v documents", n)
	}
	dup := ts.waitSchedState("dup", "failed")
	contID := ts.waitSchedState("cont", "running")["id"].(string)
	want := "Replication `" + contID + "` specified by document `dup` already started, triggered by document `cont` from db `_replicator`"
	if info, _ := dup["info"].(map[string]any); info["error"] != want {
		t.Errorf("duplicate: %v, want %q", dup, want)
	}
	for _, id := range []string{"badhost", "notarget", "badauth"} {
		d := ts.waitSchedState(id, "crashing")
		info, _ := d["info"].(map[string]any)
		if reason, _ := info["error"].(string); reason == "" || strings.Contains(reason, "adminpw") || strings.Contains(reason, "gh0st-secret") {
			t.Errorf("%s: crashing entry %v", id, d)
		}
	}
	testutil.Eventually(t, "a crashed job is retried", func() bool {
		d := ts.schedDoc("notarget")
		return d != nil && d["error_count"].(float64) >= 2
	})
	ts.putDoc("src", "more", map[string]any{"n": 9})
	testutil.Eventually(t, "the good job goes on", func() bool { return ts.docCount("tgt") == 6 })
	if ts.schedDoc("cont")["state"] != "running" {
		t.Errorf("the good job: %v", ts.schedDoc("cont"))
	}
	r := ts.must(200, "GET", "/_scheduler/docs?states=failed,completed", nil).json(t)
	if r["total_rows"] != float64(2) {
		t.Errorf("states=failed,completed: %v", r)
	}
	ts.wantReason(400, "query_parse_error", "States must be one or more of [initializing,error,running,pending,crashing,completed,failed]", "GET", "/_scheduler/docs?states=nope", nil)
	ts.wantReason(400, "bad_request", "Invalid path", "GET", "/_scheduler/docs/nope_db", nil)
}

// TestReplicatorResumesAfterRestart: a hub closed and opened again on
// its folder resumes its job by itself, from the checkpoint: the second
// run checks only what was written meanwhile.
func TestReplicatorResumesAfterRestart(t *testing.T) {
	remote := newHub(t, Config{})
	remote.must(201, "PUT", "/src", nil)
	remote.must(201, "PUT", "/tgt", nil)
	for i := range 20 {
		remote.putDoc("src", fmt.Sprintf("a%02d", i), map[string]any{"n": i})
	}
	dir := t.TempDir()
	start := func() (*Server, *tserver) {
		s, err := New(Config{DataDir: dir, Users: map[string]string{"admin": "adminpw"}, PasswordIterations: 10})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		t.Cleanup(func() { s.sched.Close(); hs.Close(); s.Close() })
		return s, &tserver{t: t, s: s, url: hs.URL, user: "admin", pass: "adminpw"}
	}
	s1, h1 := start()
	if n := s1.ResumedReplications(); n != 0 {
		t.Errorf("a new hub resumed %d jobs", n)
	}
	h1.must(201, "PUT", "/_replicator/up", map[string]any{"source": remote.dbURL("src"), "target": remote.dbURL("tgt"), "continuous": true})
	testutil.Eventually(t, "the first run copies 20 documents", func() bool { return remote.docCount("tgt") == 20 })
	if err := s1.sched.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		remote.putDoc("src", fmt.Sprintf("b%02d", i), map[string]any{"n": i})
	}
	s2, h2 := start()
	if n := s2.ResumedReplications(); n != 1 {
		t.Errorf("the hub resumed %d jobs, want 1", n)
	}
	testutil.Eventually(t, "the second run copies the 5 new ones", func() bool { return remote.docCount("tgt") == 25 })
	var info map[string]any
	testutil.Eventually(t, "the job reports its stats", func() bool {
		info, _ = h2.schedDoc("up")["info"].(map[string]any)
		return info != nil && info["docs_written"] == float64(5)
	})
	if info["revisions_checked"] != float64(5) {
		t.Errorf("the resumed job checked %v revisions, want the 5 new ones (resumed from its checkpoint)", info["revisions_checked"])
	}
}

// TestReplicate: POST /_replicate runs a one-shot and answers its
// history, starts a continuous one (202) that _scheduler/jobs lists
// without a document, cancels it, and answers failures as CouchDB 3.5.
func TestReplicate(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.must(201, "PUT", "/src", nil)
	for i := range 7 {
		ts.putDoc("src", fmt.Sprintf("d%d", i), map[string]any{"n": i})
	}
	r := ts.must(200, "POST", "/_replicate", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("once"), "create_target": true}).json(t)
	hist, _ := r["history"].([]any)
	if r["ok"] != true || len(hist) != 1 || hist[0].(map[string]any)["docs_written"] != float64(7) {
		t.Errorf("one-shot answer %v", r)
	}
	if n := ts.docCount("once"); n != 7 {
		t.Errorf("one-shot target has %v documents", n)
	}
	cont := map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("cont"), "create_target": true, "continuous": true}
	r = ts.must(202, "POST", "/_replicate", cont).json(t)
	id, _ := r["_local_id"].(string)
	if !strings.HasSuffix(id, "+continuous+create_target") {
		t.Errorf("continuous answer %v", r)
	}
	testutil.Eventually(t, "the continuous job copies the source", func() bool {
		return ts.do("GET", "/cont", nil).status == 200 && ts.docCount("cont") == 7
	})
	job := ts.must(200, "GET", "/_scheduler/jobs/"+strings.ReplaceAll(id, "+", "%2B"), nil).json(t)
	if job["database"] != nil || job["doc_id"] != nil || job["user"] != "admin" {
		t.Errorf("_replicate's job %v", job)
	}
	cont["cancel"] = true
	if r := ts.must(200, "POST", "/_replicate", cont).json(t); r["_local_id"] != id {
		t.Errorf("cancel answer %v", r)
	}
	ts.wantReason(404, "not_found", "missing", "POST", "/_replicate", cont)
	ts.wantReason(404, "not_found", "missing", "POST", "/_replicate", `{"replication_id":"nope","cancel":true}`)
	ts.wantError(500, "db_not_found", "POST", "/_replicate", map[string]any{"source": ts.dbURL("src"), "target": ts.dbURL("nope")})
	ts.wantError(500, "replication_auth_error", "POST", "/_replicate", map[string]any{"source": strings.Replace(ts.dbURL("src"), "admin:adminpw", "ghost:gh0st", 1), "target": ts.dbURL("once")})
	ts.wantReason(500, "error", "Missing replicator database", "POST", "/_replicate", map[string]any{"source": ts.dbURL("src")})
	ts.wantReason(400, "bad_request", "Request body must be a JSON object", "POST", "/_replicate", `[]`)
	ts.wantReason(400, "bad_request", "Missing request body", "GET", "/_replicate", nil)
	if jobs := ts.must(200, "GET", "/_scheduler/jobs", nil).json(t); jobs["total_rows"] != float64(0) {
		t.Errorf("jobs left: %v", jobs)
	}

	// As CouchDB: any user who logged in may replicate (with the
	// endpoints' credentials); another user's job is theirs or a server
	// admin's to cancel; anonymous may not.
	ts.createUser("bob", "bobpw", nil)
	ts.createUser("carol", "carolpw", nil)
	delete(cont, "cancel")
	ts.user, ts.pass = "bob", "bobpw"
	id, _ = ts.must(202, "POST", "/_replicate", cont).json(t)["_local_id"].(string)
	cancel := `{"replication_id":"` + id + `","cancel":true}`
	ts.user, ts.pass = "carol", "carolpw"
	ts.wantReason(401, "unauthorized", "You are not a server admin.", "POST", "/_replicate", cancel)
	ts.wantReason(401, "unauthorized", "You are not a server admin.", "POST", "/_replicate", cont)
	ts.user, ts.pass = "", ""
	ts.wantReason(401, "unauthorized", "You are not an authenticated user", "POST", "/_replicate", cont)
	ts.user, ts.pass = "bob", "bobpw"
	ts.must(200, "POST", "/_replicate", cancel)
	ts.user, ts.pass = "admin", "adminpw"
	if jobs := ts.must(200, "GET", "/_scheduler/jobs", nil).json(t); jobs["total_rows"] != float64(0) {
		t.Errorf("jobs left: %v", jobs)
	}
}

// TestReplicatorUsers: once an admin opens _replicator to users, a
// user's document belongs to them ("owner"), another user reads it
// without its credentials and may not write it in the owner's name.
func TestReplicatorUsers(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.createUser("bob", "bobpw", nil)
	ts.createUser("carol", "carolpw", nil)
	ts.must(201, "PUT", "/src", nil)
	ts.do("GET", "/_replicator", nil) // made on first use
	ts.must(200, "PUT", "/_replicator/_security", map[string]any{"members": map[string]any{"names": []string{"bob", "carol"}}})
	as := func(u, p string) { ts.user, ts.pass = u, p }
	as("bob", "bobpw")
	ts.must(201, "PUT", "/_replicator/bobs", map[string]any{"source": ts.dbURL("src"),
		"target": map[string]any{"url": ts.url + "/bobtgt", "headers": map[string]string{"Authorization": "Basic c2VjcmV0LWhlYWRlcg=="},
			"auth": map[string]any{"basic": map[string]any{"username": "admin", "password": "adminpw"}}}})
	own := ts.must(200, "GET", "/_replicator/bobs", nil)
	if m := own.json(t); m["owner"] != "bob" || !strings.Contains(string(own.body), "adminpw") {
		t.Errorf("bob reads his own document as %s", own.body)
	}
	as("carol", "carolpw")
	other := ts.must(200, "GET", "/_replicator/bobs", nil)
	for _, secret := range []string{"adminpw", "c2VjcmV0LWhlYWRlcg", "auth"} {
		if strings.Contains(string(other.body), secret) {
			t.Errorf("carol reads bob's document with %q: %s", secret, other.body)
		}
	}
	rev := other.json(t)["_rev"].(string)
	ts.wantReason(403, "forbidden", "Can't update replication documents from other users.", "PUT", "/_replicator/bobs",
		map[string]any{"_rev": rev, "source": ts.dbURL("src"), "target": ts.dbURL("x"), "owner": "bob"})
	as("admin", "adminpw")
	if b := ts.must(200, "GET", "/_replicator/bobs", nil).body; !strings.Contains(string(b), "adminpw") {
		t.Errorf("the admin reads bob's document as %s", b)
	}
	as("carol", "carolpw")
	ts.wantReason(401, "unauthorized", "You are not a server admin.", "GET", "/_replicator/_all_docs", nil)
}
