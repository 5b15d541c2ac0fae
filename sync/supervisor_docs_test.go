package sync_test

import (
	"context"
	"net/http"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// docsHeard collects the documents of EventDocs, by direction.
func docsHeard(evs []sync.Event) map[string]map[string]sync.DocEvent {
	out := map[string]map[string]sync.DocEvent{}
	for _, e := range evs {
		if e.Kind != sync.EventDocs {
			continue
		}
		if out[e.Replication] == nil {
			out[e.Replication] = map[string]sync.DocEvent{}
		}
		for _, d := range e.Docs {
			out[e.Replication][d.ID] = d
		}
	}
	return out
}

// A two-way continuous sync reports the documents it moves, both ways,
// in batches, and its progress only grows: Completed <= Total, both
// monotone, Completed == Total once caught up, Total growing with new
// changes.
func TestSupervisorDocumentEventsAndProgress(t *testing.T) {
	h := startHub(t)
	remoteURL := h.url("notes")
	if st := testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil); st != http.StatusCreated {
		t.Fatalf("create: %d", st)
	}
	putRemote(t, remoteURL, "r", 30)
	db := localdbtest.OpenNamed(t, "local", nil)
	synctest.PutDocs(t, db, "l", 20)
	rev := synctest.Put(t, db, "gone", "", `{}`)
	if _, err := db.Delete(context.Background(), "gone", rev); err != nil {
		t.Fatal(err)
	}
	var log eventLog
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{
		Local: synctest.Local(db), Remote: synctest.Remote(t, remoteURL, nil), Direction: sync.Both,
		Options: sync.Options{Continuous: true, OnEvent: log.add, DocumentEvents: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Sample the progress while it runs: never down, never past Total.
	stop := make(chan struct{})
	var wg gosync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var lc, lt int64
		for {
			st := sup.Status()
			if st.Completed < lc || st.Total < lt || st.Completed > st.Total {
				t.Errorf("progress went from %d/%d to %d/%d", lc, lt, st.Completed, st.Total)
			}
			lc, lt = st.Completed, st.Total
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	caughtUp := func(want int64) func() bool {
		return func() bool {
			st := sup.Status()
			return st.State == sync.StateIdle && st.Completed == st.Total && st.Total >= want
		}
	}
	testutil.Eventually(t, "51 documents synced", caughtUp(51))
	heard := docsHeard(log.all())
	if len(heard["pull"]) != 30 || len(heard["push"]) != 21 {
		t.Fatalf("heard %d pulled, %d pushed documents, want 30 and 21", len(heard["pull"]), len(heard["push"]))
	}
	if d := heard["push"]["gone"]; !d.Deleted || d.Rev == "" || d.Err != nil {
		t.Fatalf("the deletion was reported as %+v", d)
	}
	if d := heard["pull"]["r0007"]; d.Deleted || d.Rev == "" || d.Err != nil {
		t.Fatalf("r0007 was reported as %+v", d)
	}
	batches := 0
	for _, e := range log.all() {
		if e.Kind == sync.EventDocs && len(e.Docs) > 1 {
			batches++
		}
	}
	if batches == 0 {
		t.Error("no event carried more than one document: not batched")
	}
	// New changes make Total grow; Completed catches up.
	before := sup.Status().Total
	putRemote(t, remoteURL, "more", 5)
	testutil.Eventually(t, "5 more documents synced", caughtUp(before+5))
}

// Without Options.DocumentEvents no EventDocs is sent.
func TestNoDocumentEventsUnlessAsked(t *testing.T) {
	src, dst := localdbtest.OpenNamed(t, "src", nil), localdbtest.OpenNamed(t, "dst", nil)
	synctest.PutDocs(t, src, "d", 10)
	var log eventLog
	r, err := sync.New(sync.Options{Source: synctest.Local(src), Target: synctest.Local(dst), OnEvent: log.add})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, e := range log.all() {
		if e.Kind == sync.EventDocs {
			t.Fatalf("an EventDocs was sent: %+v", e)
		}
	}
	if st := r.Status(); st.Stats.DocsCompleted != 10 {
		t.Fatalf("DocsCompleted = %d, want 10", st.Stats.DocsCompleted)
	}
}

// Listeners: several, each removable; one that wants documents turns
// EventDocs on without Options.DocumentEvents or OnEvent, and only it
// gets them.
func TestSupervisorListeners(t *testing.T) {
	src, dst := localdbtest.OpenNamed(t, "src", nil), localdbtest.OpenNamed(t, "dst", nil)
	synctest.PutDocs(t, src, "d", 10)
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{Local: synctest.Local(src), Remote: synctest.Local(dst), Direction: sync.Push})
	if err != nil {
		t.Fatal(err)
	}
	var docs, plain, gone eventLog
	removeDocs := sup.AddListener(docs.add, true)
	defer removeDocs()
	removePlain := sup.AddListener(plain.add, false)
	defer removePlain()
	removeGone := sup.AddListener(gone.add, true)
	removeGone()
	removeGone() // twice: a no-op
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sup.Wait(); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the stopped state heard", func() bool {
		evs := plain.all()
		return len(evs) > 0 && evs[len(evs)-1].State == sync.StateStopped
	})
	if n := len(docsHeard(docs.all())["push"]); n != 10 {
		t.Fatalf("the document listener heard %d documents, want 10", n)
	}
	for _, e := range plain.all() {
		if e.Kind == sync.EventDocs {
			t.Fatal("a listener that did not ask for documents got an EventDocs")
		}
	}
	if len(gone.all()) != 0 {
		t.Fatal("a removed listener was called")
	}
}
