package mobile

import (
	"context"
	"encoding/json"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
)

// statusRecorder is a ReplicatorListener that keeps what it heard.
type statusRecorder struct {
	mu      gosync.Mutex
	states  []string
	docErrs []string
	ch      chan *ReplicatorStatus
}

func newRecorder() *statusRecorder { return &statusRecorder{ch: make(chan *ReplicatorStatus, 1000)} }

func (s *statusRecorder) OnStatus(st *ReplicatorStatus) {
	s.mu.Lock()
	s.states = append(s.states, st.State)
	s.mu.Unlock()
	s.ch <- st
}

func (s *statusRecorder) OnDocumentError(id, rev, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docErrs = append(s.docErrs, id+" "+msg)
}

// waitState waits for a status with the given state (bounded).
func (s *statusRecorder) waitState(t *testing.T, state string) *ReplicatorStatus {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case st := <-s.ch:
			if st.State == state {
				return st
			}
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("no %q status; saw %v", state, s.states)
		}
	}
}

// httpDo sends a request and returns the JSON object answered; an error
// status fails the test.
func httpDo(t *testing.T, method, url, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if st := testutil.DoJSON(context.Background(), t, method, url, body, &m); st >= 300 {
		t.Fatalf("%s %s: %d %v", method, url, st, m)
	}
	return m
}

func TestReplicatorOneShotBothWithResolver(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "hub")
	d := openTest(t)
	lg := useLogger(t, LevelDebug)
	must(d.Put(`{"_id":"local1","v":1}`))
	httpDo(t, "PUT", url+"/remote1", `{"v":1}`)
	shared := httpDo(t, "PUT", url+"/shared", `{"v":0}`)

	cfg := NewReplicatorConfig(url)
	rec := newRecorder()
	r := must(NewReplicator(d, cfg))
	r.SetListener(rec)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	st := rec.waitState(t, "stopped")
	if st.LastError != "" || st.DocsWritten != 3 || st.DocsRead != 3 {
		t.Fatalf("first sync: %+v", st)
	}
	if _, err := d.Get("remote1"); err != nil {
		t.Fatalf("pulled doc: %v", err)
	}
	httpDo(t, "GET", url+"/local1", "")

	// Edit "shared" on both sides: the pull makes a conflict, which the
	// replicator's resolver settles once the pull is done. (A pull alone:
	// with "both", the push's write of the same document races the pull's
	// changes feed on pouchdb-server; see the report.)
	sharedRev := shared["rev"].(string)
	httpDo(t, "PUT", url+"/shared", `{"_rev":"`+sharedRev+`","v":"remote"}`)
	must(d.Put(`{"_id":"shared","_rev":"` + sharedRev + `","v":"local"}`))
	var asked []string
	pullCfg := NewReplicatorConfig(url)
	pullCfg.Direction = "pull"
	pull := must(NewReplicator(d, pullCfg))
	pull.SetConflictResolver(resolverFunc(func(id, leaves string) (string, error) {
		asked = append(asked, id) // only the supervisor goroutine calls it
		return `{"v":"merged"}`, nil
	}))
	prec := newRecorder()
	pull.SetListener(prec)
	if err := pull.Start(); err != nil {
		t.Fatal(err)
	}
	st = prec.waitState(t, "stopped")
	if st.LastError != "" || st.DocsWritten != 1 {
		t.Logf("log:\n%s", lg.all())
		t.Fatalf("pull: %+v", st)
	}
	if len(asked) != 1 || asked[0] != "shared" {
		t.Fatalf("resolver asked about %v", asked)
	}
	doc := mustJSON(t, must(d.GetWithConflicts("shared")))
	if doc["v"] != "merged" || doc["_conflicts"] != nil {
		t.Fatalf("shared after sync: %v", doc)
	}
	if got := pull.Status(); got.State != "stopped" || got.DocsWritten != 1 {
		t.Fatalf("Status() = %+v", got)
	}
	// Start again: a finished replicator runs anew from its checkpoints
	// and pushes the merge.
	must(0, r.Start())
	if st := rec.waitState(t, "stopped"); st.LastError != "" || st.DocsWritten != 5 { // + the merge and the loser's tombstone
		t.Fatalf("third sync: %+v", st)
	}
	if remote := httpDo(t, "GET", url+"/shared", ""); remote["v"] != "merged" {
		t.Fatalf("remote after pushing the merge: %v", remote)
	}
}

func TestReplicatorContinuousNetworkToggle(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "live")
	d := openTest(t)
	changes := make(chan string, 100)
	must(d.AddChangeListener(listenerFunc(func(js string) { changes <- js })))

	cfg := NewReplicatorConfig(url)
	cfg.Direction = "pull"
	cfg.Continuous = true
	rec := newRecorder()
	r := must(NewReplicator(d, cfg))
	r.SetListener(rec)
	must(0, r.Start())
	rec.waitState(t, "idle")

	httpDo(t, "PUT", url+"/one", `{}`)
	if row := mustJSON(t, waitFor(t, changes)); row["id"] != "one" {
		t.Fatalf("change = %v", row)
	}

	r.SetNetworkAvailable(false)
	rec.waitState(t, "offline")
	if st := r.Status(); st.State != "offline" {
		t.Fatalf("Status() offline = %+v", st)
	}
	httpDo(t, "PUT", url+"/two", `{}`)
	select {
	case js := <-changes:
		t.Fatalf("replicated while offline: %s", js)
	default:
	}
	r.SetNetworkAvailable(true)
	if row := mustJSON(t, waitFor(t, changes)); row["id"] != "two" {
		t.Fatalf("change after coming back online = %v", row)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); st.State != "stopped" || st.DocsWritten != 2 {
		t.Fatalf("Status() after Stop = %+v", st)
	}
	if err := r.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestReplicatorErrors(t *testing.T) {
	srv := testpeer.PouchDB(t)
	d := openTest(t)
	for _, cfg := range []*ReplicatorConfig{
		{URL: "ftp://x/db"},
		{URL: srv.URL + "/db", Direction: "sideways"},
		{URL: srv.URL + "/db", DocIDs: `{"not":"an array"}`},
		{URL: srv.URL + "/db", Headers: `["x"]`},
		{URL: srv.URL + "/db", Selector: `{bad`},
		{URL: srv.URL + "/db", Throttle: -1},
	} {
		if _, err := NewReplicator(d, cfg); err == nil || !strings.HasPrefix(err.Error(), "bad_request") {
			t.Errorf("NewReplicator(%+v): err = %v", cfg, err)
		}
	}
	// Pulling from a missing database fails permanently: state "error".
	cfg := NewReplicatorConfig(srv.URL + "/missing")
	cfg.Direction = "pull"
	rec := newRecorder()
	r := must(NewReplicator(d, cfg))
	r.SetListener(rec)
	must(0, r.Start())
	st := rec.waitState(t, "error")
	if !strings.Contains(st.LastError, "not_found") && !strings.Contains(st.LastError, "does not exist") {
		t.Fatalf("error status = %+v", st)
	}
}

// A listener may stop its replicator from inside a callback, and closing
// the Database stops a running replicator.
func TestReplicatorStopFromListenerAndClose(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "s")
	d := openTest(t)
	cfg := NewReplicatorConfig(url)
	cfg.Continuous = true
	r := must(NewReplicator(d, cfg))
	stopped := make(chan error, 1)
	var once gosync.Once
	r.SetListener(&stopOnIdle{r: r, once: &once, done: stopped})
	must(0, r.Start())
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the listener's Stop did not return")
	}

	r2 := must(NewReplicator(d, cfg))
	rec := newRecorder()
	r2.SetListener(rec)
	must(0, r2.Start())
	rec.waitState(t, "idle")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if st := r2.Status(); st.State != "stopped" {
		t.Fatalf("after Close: %+v", st)
	}
	if err := r2.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

type stopOnIdle struct {
	r    *Replicator
	once *gosync.Once
	done chan error
}

func (s *stopOnIdle) OnStatus(st *ReplicatorStatus) {
	if st.State == "idle" {
		s.once.Do(func() { s.done <- s.r.Stop() })
	}
}

func (s *stopOnIdle) OnDocumentError(id, rev, msg string) {}

// A continuous pull resolves conflicts each time it catches up.
func TestReplicatorContinuousAutoResolve(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "auto")
	d := openTest(t)
	base := httpDo(t, "PUT", url+"/doc", `{"v":"base"}`)["rev"].(string)
	// The same base revision on both sides, then an edit on each.
	must(d.db.BulkDocs(context.Background(), []*couchdoc.Doc{{
		ID: "doc", Rev: base, Body: json.RawMessage(`{"v":"base"}`),
		Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{base[2:]}},
	}}, false))
	httpDo(t, "PUT", url+"/doc", `{"_rev":"`+base+`","v":"remote"}`)
	must(d.Put(`{"_id":"doc","_rev":"` + base + `","v":"local"}`))

	changes := make(chan string, 100)
	must(d.AddChangeListener(listenerFunc(func(js string) { changes <- js })))
	cfg := NewReplicatorConfig(url)
	cfg.Direction, cfg.Continuous = "pull", true
	r := must(NewReplicator(d, cfg))
	r.SetConflictResolver(resolverFunc(func(id, leaves string) (string, error) {
		return `{"v":"merged"}`, nil
	}))
	must(0, r.Start())
	// Each change may be the resolution's last write (bounded: the pull
	// and the resolution make at most four).
	var doc map[string]any
	for i := 0; i < 4; i++ {
		waitFor(t, changes)
		doc = mustJSON(t, must(d.GetWithConflicts("doc")))
		if doc["v"] == "merged" && doc["_conflicts"] == nil {
			break
		}
	}
	if doc["v"] != "merged" || doc["_conflicts"] != nil {
		t.Fatalf("after auto-resolution: %v", doc)
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
}
