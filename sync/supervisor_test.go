package sync_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/server"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// hub is a Settee server over a data directory that can die (listener and
// connections closed, store closed) and come back on the same address with
// its data: a real peer that goes away, checkpoints included.
type hub struct {
	t    testing.TB
	dir  string
	addr string
	srv  *server.Server
	hs   *http.Server
}

func startHub(t testing.TB) *hub {
	t.Helper()
	h := &hub{t: t, dir: t.TempDir()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	h.serve(ln)
	t.Cleanup(h.down)
	return h
}

func (h *hub) serve(ln net.Listener) {
	srv, err := server.New(server.Config{DataDir: h.dir})
	if err != nil {
		h.t.Fatal(err)
	}
	h.srv, h.hs = srv, &http.Server{Handler: srv}
	go func() { _ = h.hs.Serve(ln) }()
}

// url is the database name's URL on the hub.
func (h *hub) url(name string) string { return "http://" + h.addr + "/" + name }

// down kills the hub: connections drop, new ones are refused.
func (h *hub) down() {
	if h.hs == nil {
		return
	}
	_ = h.hs.Close()
	_ = h.srv.Close()
	h.hs, h.srv = nil, nil
}

// up restarts the hub on its address.
func (h *hub) up() {
	h.t.Helper()
	h.serve(synctest.Relisten(h.t, h.addr))
}

// putRemote writes n documents "<prefix>N" to a remote database.
func putRemote(t testing.TB, dbURL, prefix string, n int) {
	t.Helper()
	docs := make([]map[string]any, n)
	for i := range docs {
		docs[i] = map[string]any{"_id": fmt.Sprintf("%s%04d", prefix, i), "i": i}
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", dbURL+"/_bulk_docs", map[string]any{"docs": docs}, nil); st != http.StatusCreated {
		t.Fatalf("_bulk_docs: %d", st)
	}
}

func docCount(t testing.TB, db *localdb.DB) int64 {
	t.Helper()
	info, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.DocCount
}

// eventLog records a supervisor's events.
type eventLog struct {
	mu  gosync.Mutex
	evs []sync.Event
}

func (l *eventLog) add(e sync.Event) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

func (l *eventLog) all() []sync.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sync.Event(nil), l.evs...)
}

// waitState waits for a state event with state after the first from
// events, and returns the index after it.
func (l *eventLog) waitState(t testing.TB, from int, state sync.State) int {
	t.Helper()
	n := 0
	testutil.Eventually(t, "state "+string(state), func() bool {
		evs := l.all()
		for i := from; i < len(evs); i++ {
			if evs[i].Kind == sync.EventState && evs[i].State == state {
				n = i + 1
				return true
			}
		}
		return false
	})
	return n
}

// A continuous pull goes offline when its peer dies, comes back by itself
// when the peer returns, and resumes from its checkpoint: nothing is read
// twice.
func TestSupervisorPeerDiesAndReturns(t *testing.T) {
	h := startHub(t)
	remoteURL := h.url("notes")
	if st := testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	putRemote(t, remoteURL, "a", 20)
	db := localdbtest.OpenNamed(t, "local", nil)
	var log eventLog
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{
		Local: synctest.Local(db), Remote: synctest.Remote(t, remoteURL, nil), Direction: sync.Pull,
		Options: sync.Options{Continuous: true, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 100 * time.Millisecond,
			OnEvent: log.add},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	at := log.waitState(t, 0, sync.StateIdle)
	testutil.Eventually(t, "20 docs and their checkpoint", func() bool {
		st := sup.Status()
		return docCount(t, db) == 20 && len(st.CheckpointedSeq) > 0 && bytes.Equal(st.CheckpointedSeq, st.LastSeq)
	})
	ckpt := sup.Status().CheckpointedSeq

	h.down()
	at = log.waitState(t, at, sync.StateOffline)
	if st := sup.Status(); st.State != sync.StateOffline || st.LastError == nil {
		t.Fatalf("status with the peer down: %+v", st)
	}
	h.up()
	putRemote(t, remoteURL, "b", 5)
	back := log.waitState(t, at, sync.StateIdle)
	for _, e := range log.all()[at:back] {
		if e.Kind == sync.EventState && e.State == sync.StateStarting {
			t.Errorf("a new attempt while offline was reported as %+v", e) // offline until it recovers
		}
	}
	testutil.Eventually(t, "25 docs", func() bool { return docCount(t, db) == 25 })

	if err := sup.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	res := sup.Results()
	if len(res) != 1 || !bytes.Equal(res[0].StartSeq, ckpt) {
		t.Fatalf("the session after the peer came back started at %s, want the checkpoint %s", res[0].StartSeq, ckpt)
	}
	if st := sup.Status(); st.State != sync.StateStopped || st.Stats.DocsRead != 25 || st.Stats.DocsWritten != 25 || st.LastError != nil {
		t.Fatalf("status after Stop: %+v (25 read and written, none twice)", st)
	}
	if err := sup.Wait(); err != nil { // the last events delivered
		t.Fatal(err)
	}
	evs := log.all()
	if last := evs[len(evs)-1]; last.Kind != sync.EventState || last.State != sync.StateStopped || last.Replication != "pull" {
		t.Fatalf("last event %+v, want pull stopped", last)
	}
}

// Offline (SetOnline(false)) stops the session with its checkpoint and
// waits; back online it resumes from it. Stats add up over the sessions.
func TestSupervisorSetOnline(t *testing.T) {
	h := startHub(t)
	remoteURL := h.url("notes")
	testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil)
	putRemote(t, remoteURL, "a", 10)
	db := localdbtest.OpenNamed(t, "local", nil)
	synctest.PutDocs(t, db, "l", 3)
	var log eventLog
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{
		Local: synctest.Local(db), Remote: synctest.Remote(t, remoteURL, nil), Direction: sync.Both,
		Options: sync.Options{Continuous: true, OnEvent: log.add},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	testutil.Eventually(t, "both idle", func() bool {
		st := sup.Status()
		return len(st.Directions) == 2 && st.Directions[0].State == sync.StateIdle && st.Directions[1].State == sync.StateIdle &&
			docCount(t, db) == 13
	})
	at := len(log.all())
	sup.SetOnline(false)
	log.waitState(t, at, sync.StateOffline)
	st := sup.Status()
	if st.State != sync.StateOffline || st.Directions[0].State != sync.StateOffline || st.Stats.DocsWritten != 13 {
		t.Fatalf("offline status: %+v", st)
	}
	pullCkpt := st.Directions[1].CheckpointedSeq
	putRemote(t, remoteURL, "b", 4)
	time.Sleep(200 * time.Millisecond) // a running session would pull them at once
	if n := docCount(t, db); n != 13 {
		t.Fatalf("replicated while offline: %d docs", n)
	}
	sup.SetOnline(true)
	testutil.Eventually(t, "17 docs", func() bool { return docCount(t, db) == 17 })
	if err := sup.Stop(); err != nil {
		t.Fatal(err)
	}
	res := sup.Results()
	if len(res) != 2 || !bytes.Equal(res[1].StartSeq, pullCkpt) {
		t.Fatalf("pull resumed at %s, want %s", res[1].StartSeq, pullCkpt)
	}
	if st := sup.Status(); st.Stats.DocsWritten != 17 || st.Directions[1].Stats.DocsWritten != 14 || st.State != sync.StateStopped {
		t.Fatalf("after Stop: %+v", st)
	}

	// Stopped while it waits offline, it says stopped.
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	at = len(log.all())
	sup.SetOnline(false)
	log.waitState(t, at, sync.StateOffline)
	if err := sup.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := sup.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := log.all()
	if st := sup.Status(); st.State != sync.StateStopped || st.Directions[0].State != sync.StateStopped || evs[len(evs)-1].State != sync.StateStopped {
		t.Fatalf("stopped while offline: status %+v, last event %+v", st, evs[len(evs)-1])
	}
	sup.SetOnline(true)
}

// Stop returns without waiting for the continuous feed's heartbeat or for
// the backoff of a session that lost its peer.
func TestSupervisorStopIsPrompt(t *testing.T) {
	h := startHub(t)
	remoteURL := h.url("notes")
	testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil)
	db := localdbtest.OpenNamed(t, "local", nil)
	var log eventLog
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{
		Local: synctest.Local(db), Remote: synctest.Remote(t, remoteURL, nil), Direction: sync.Pull,
		Options: sync.Options{Continuous: true, Heartbeat: 10 * time.Minute, RetryDelay: 10 * time.Minute,
			MaxRetryDelay: 10 * time.Minute, Retries: -1, OnEvent: log.add},
	})
	if err != nil {
		t.Fatal(err)
	}
	stopWithin := func(what string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- sup.Stop() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Stop %s: %v", what, err)
			}
		case <-time.After(time.Minute): // far below the 10 minutes it must not wait
			t.Fatalf("Stop %s waited", what)
		}
	}
	ctx := synctest.Ctx(t)
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	at := log.waitState(t, 0, sync.StateIdle)
	stopWithin("while idle")
	if st := sup.Status(); st.State != sync.StateStopped {
		t.Fatalf("after Stop: %+v", st)
	}

	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	at = log.waitState(t, at, sync.StateIdle)
	h.down()
	log.waitState(t, at, sync.StateOffline)
	stopWithin("while offline in backoff")
	if err := sup.Wait(); err != nil {
		t.Fatal(err)
	}
}

// A slow OnEvent sees progress coalesced (the latest per direction, never
// twice the same), every state change and every refused document, in
// order, on one goroutine; and may call Stop.
func TestSupervisorCoalescesEvents(t *testing.T) {
	pouch := testpeer.PouchDB(t)
	remoteURL := pouch.CreateDB(t, "strict")
	vdu := `function(doc) { if (doc.bad) { throw({forbidden: "no bad docs"}); } }`
	if st := testutil.DoJSON(context.Background(), t, "PUT", remoteURL+"/_design/strict", map[string]any{"validate_doc_update": vdu}, nil); st != http.StatusCreated {
		t.Fatalf("design doc: %d", st)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	synctest.PutDocs(t, db, "ok", 500)
	for i := range 7 {
		synctest.Put(t, db, fmt.Sprintf("bad%d", i), "", `{"bad":true}`)
	}
	gate := make(chan struct{})
	var (
		log      eventLog
		inside   int // OnEvent calls running at once, at most 1
		maxInner int
		mu       gosync.Mutex
	)
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{
		Local: synctest.Local(db), Remote: synctest.Remote(t, remoteURL, nil), Direction: sync.Push,
		Options: sync.Options{BatchSize: 10, BulkDocsSize: 10, OnEvent: func(e sync.Event) {
			mu.Lock()
			inside++
			maxInner = max(maxInner, inside)
			mu.Unlock()
			<-gate // a listener stuck until the push has ended
			log.add(e)
			mu.Lock()
			inside--
			mu.Unlock()
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the push to end", func() bool { return sup.Results() != nil })
	close(gate)
	if err := sup.Wait(); err != nil {
		t.Fatal(err)
	}
	evs := log.all()
	var progress, failures int
	var last sync.Event
	for i, e := range evs {
		switch e.Kind {
		case sync.EventProgress:
			progress++
			if last.Kind == sync.EventProgress && last.Stats == e.Stats && last.State == e.State && last.Pending == e.Pending &&
				bytes.Equal(last.CheckpointedSeq, e.CheckpointedSeq) && bytes.Equal(last.LastSeq, e.LastSeq) {
				t.Errorf("event %d repeats the progress before it: %+v", i, e)
			}
		case sync.EventDocFailure:
			failures++
			if e.Doc == nil || !errors.Is(e.Err, e.Doc.Err) {
				t.Errorf("doc failure event %+v", e)
			}
		}
		if e.Stats.DocsWritten < last.Stats.DocsWritten {
			t.Errorf("event %d went back: %d written after %d", i, e.Stats.DocsWritten, last.Stats.DocsWritten)
		}
		last = e
	}
	// 507 documents in batches of 10 send about a hundred progress events
	// (one per batch and per checkpoint); the stuck listener got the one
	// it was given and the latest after it.
	if progress > 2 || failures != 7 || maxInner != 1 {
		t.Fatalf("%d progress events, %d doc failures, %d calls at once; want at most 2, 7, 1", progress, failures, maxInner)
	}
	if last.Kind != sync.EventState || last.State != sync.StateStopped || last.Stats.DocsWritten != 500 || last.Stats.DocWriteFailures != 7 {
		t.Fatalf("last event %+v, want stopped with 500 written and 7 refused", last)
	}
	if st := sup.Status(); st.State != sync.StateStopped || st.Stats != last.Stats {
		t.Fatalf("status %+v, last event's stats %+v", st, last.Stats)
	}
}

// A permanent failure ends the supervisor in StateError with the error,
// reported once; Start runs it again.
func TestSupervisorPermanentError(t *testing.T) {
	h := startHub(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	var log eventLog
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{
		Local: synctest.Local(db), Remote: synctest.Remote(t, h.url("missing"), nil), Direction: sync.Pull,
		Options: sync.Options{Continuous: true, OnEvent: log.add},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := synctest.Ctx(t)
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sup.Wait(); err == nil || sup.Status().State != sync.StateError {
		t.Fatalf("Wait = %v, status %+v; want a not-found error", err, sup.Status())
	}
	var errs int
	for _, e := range log.all() {
		if e.Kind == sync.EventState && e.State == sync.StateError {
			errs++
			if e.Err == nil {
				t.Errorf("error event without its error: %+v", e)
			}
		}
	}
	if errs != 1 {
		t.Fatalf("%d error events, want 1", errs)
	}
	testutil.DoJSON(context.Background(), t, "PUT", h.url("missing"), nil, nil)
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	log.waitState(t, len(log.all()), sync.StateIdle)
	if err := sup.Stop(); err != nil || sup.Status().LastError != nil {
		t.Fatalf("Stop = %v, status %+v", err, sup.Status())
	}
	if _, err := sync.NewSupervisor(sync.SupervisorConfig{Local: synctest.Local(db), Remote: synctest.Local(db), Direction: "sideways"}); !errors.Is(err, sync.ErrNoDirection) {
		t.Fatalf("NewSupervisor(sideways) = %v", err)
	}
}
