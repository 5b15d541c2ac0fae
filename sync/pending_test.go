package sync_test

import (
	"context"
	"fmt"
	"slices"
	gosync "sync"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// ackTarget wraps a target and, after each write it acknowledges, asks the
// real target how many of the source's documents it still lacks: lacks[n]
// is that count once n revisions were acknowledged. Writes are serialized,
// so each count is the target's state between two writes.
type ackTarget struct {
	sync.Peer
	want  map[string][]string // the source's leaves, per document
	mu    gosync.Mutex
	acked int64
	lacks map[int64]int64
	t     testing.TB
}

func newAckTarget(t testing.TB, tgt, src sync.Peer) *ackTarget {
	a := &ackTarget{Peer: tgt, want: leavesOf(t, src), lacks: map[int64]int64{}, t: t}
	a.lacks[0] = a.lacking()
	return a
}

// leavesOf reads every document's leaves from a peer's feed.
func leavesOf(t testing.TB, p sync.Peer) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	_, err := p.Changes(context.Background(), sync.ChangesOptions{}, func(c *couchdoc.Change) error {
		for _, r := range c.Changes {
			m[c.ID] = append(m[c.ID], r.Rev)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (a *ackTarget) lacking() int64 {
	diff, err := a.Peer.RevsDiff(context.Background(), a.want)
	if err != nil {
		a.t.Error(err)
		return -2
	}
	return int64(len(diff))
}

func (a *ackTarget) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	res, err := a.Peer.BulkDocs(ctx, docs)
	if err == nil {
		a.acked += int64(len(docs) - len(res))
		a.lacks[a.acked] = a.lacking()
	}
	return res, err
}

func (a *ackTarget) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.Peer.PutDoc(ctx, doc)
	if err == nil {
		a.acked++
		a.lacks[a.acked] = a.lacking()
	}
	return err
}

// checkEvents runs a replication to tgt and checks that every event after
// the start reports as pending exactly what the target lacked once the
// writes the event counts were acknowledged. It returns the events' counts.
func checkEvents(t *testing.T, opts sync.Options, tgt *ackTarget, countedAtStart bool) []int64 {
	t.Helper()
	var mu gosync.Mutex
	var seen []sync.Event
	opts.Target = tgt
	opts.OnEvent = func(e sync.Event) { mu.Lock(); seen = append(seen, e); mu.Unlock() }
	if _, err := sync.Replicate(synctest.Ctx(t), opts); err != nil {
		t.Fatal(err)
	}
	tgt.mu.Lock()
	defer tgt.mu.Unlock()
	var counts []int64
	for i, e := range seen {
		if e.State == sync.StateStarting {
			continue // before the session counted the source's changes
		}
		if !countedAtStart && len(counts) == 0 && e.Kind == sync.EventState && e.Pending == -1 {
			continue // a remote source counts with its first changes answer
		}
		want, ok := tgt.lacks[e.Stats.DocsWritten]
		if !ok || e.Pending != want {
			t.Fatalf("event %d (%s %s, %d written): pending %d, the target lacked %d (known %v)", i, e.Kind, e.State, e.Stats.DocsWritten, e.Pending, want, ok)
		}
		counts = append(counts, e.Pending+e.Stats.DocsWritten)
	}
	if last := seen[len(seen)-1]; last.State != sync.StateStopped || last.Pending != 0 || tgt.lacking() != 0 {
		t.Fatalf("end: %s, pending %d, target lacks %d", last.State, last.Pending, tgt.lacking())
	}
	return counts
}

// TestPendingPushExact pushes 1000 documents to settee serve: every event's
// pending count is what the target still lacks. Then 300 local changes
// (200 new documents, 100 edits) are listed by PendingDocIDs before the
// next push starts (from the local checkpoint only), and the resumed push
// again reports exact counts, starting from 300.
func TestPendingPushExact(t *testing.T) {
	u := serverFactory(t)(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	synctest.PutDocs(t, db, "a", 1000)
	local, remote := synctest.Local(db), synctest.Remote(t, u, nil)
	opts := sync.Options{Source: local, BatchSize: 100, BulkDocsSize: 40}
	counts := checkEvents(t, opts, newAckTarget(t, remote, local), true)
	if slices.Min(counts) != 1000 || slices.Max(counts) != 1000 || len(counts) < 25 {
		t.Fatalf("pending + written: %v", counts)
	}

	synctest.PutDocs(t, db, "b", 200)
	var want []string
	for i := range 100 {
		id := fmt.Sprintf("a%05d", i*7)
		d, err := db.Get(context.Background(), id, localdb.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Put(t, db, id, d.Rev, `{"edited":true}`)
		want = append(want, id)
	}
	for i := range 200 {
		want = append(want, fmt.Sprintf("b%05d", i))
	}
	slices.Sort(want)
	opts.Target = remote
	rep, err := sync.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if st := rep.Status(); st.Pending != -1 {
		t.Fatalf("status before the start: pending %d, want -1 (not counted)", st.Pending)
	}
	ids, err := rep.PendingDocIDs(synctest.Ctx(t))
	if err != nil || !slices.Equal(ids, want) {
		t.Fatalf("PendingDocIDs: %v, %d ids, want %d", err, len(ids), len(want))
	}
	for id, wantPending := range map[string]bool{"a00007": true, "b00199": true, "a00001": false, "zzz": false} {
		if p, err := rep.IsDocumentPending(synctest.Ctx(t), id); err != nil || p != wantPending {
			t.Fatalf("IsDocumentPending(%s) = %v, %v", id, p, err)
		}
	}

	counts = checkEvents(t, opts, newAckTarget(t, remote, local), true)
	if slices.Min(counts) != 300 || slices.Max(counts) != 300 {
		t.Fatalf("the resumed push: pending + written %v, want 300", counts)
	}
	if err := rep.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := rep.Wait(); err != nil {
		t.Fatal(err)
	}
	if ids, err := rep.PendingDocIDs(synctest.Ctx(t)); err != nil || len(ids) != 0 {
		t.Fatalf("after the push: %v, %v", ids, err)
	}
	if st := rep.Status(); st.Pending != 0 {
		t.Fatalf("status after the push: pending %d", st.Pending)
	}
}

// TestPendingPullExact pulls 1000 documents, then 300 more changes, from
// settee serve, whose changes answers carry CouchDB's "pending": every
// event counts what the local store still lacks.
func TestPendingPullExact(t *testing.T) {
	u := serverFactory(t)(t)
	seed := localdbtest.OpenNamed(t, "seed", nil)
	synctest.PutDocs(t, seed, "a", 1000)
	remote := synctest.Remote(t, u, nil)
	if _, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Local(seed), Target: remote}); err != nil {
		t.Fatal(err)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	local := synctest.Local(db)
	opts := sync.Options{Source: remote, BatchSize: 100, BulkDocsSize: 40}
	if counts := checkEvents(t, opts, newAckTarget(t, local, remote), false); slices.Min(counts) != 1000 || slices.Max(counts) != 1000 {
		t.Fatalf("pending + written: %v", counts)
	}
	synctest.PutDocs(t, seed, "b", 300)
	if _, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Local(seed), Target: remote}); err != nil {
		t.Fatal(err)
	}
	if counts := checkEvents(t, opts, newAckTarget(t, local, remote), false); slices.Min(counts) != 300 || slices.Max(counts) != 300 {
		t.Fatalf("the resumed pull: pending + written %v, want 300", counts)
	}
}

// TestPendingFilteredAndContinuous: a doc_ids push counts only its
// documents, exactly; a continuous push that caught up reports 0 and no
// pending document, and a new local write is listed until it is sent.
func TestPendingFilteredAndContinuous(t *testing.T) {
	u := serverFactory(t)(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	synctest.PutDocs(t, db, "a", 300)
	local, remote := synctest.Local(db), synctest.Remote(t, u, nil)
	var ids []string
	for i := range 50 {
		ids = append(ids, fmt.Sprintf("a%05d", i*3))
	}
	tgt := newAckTarget(t, remote, local)
	for id := range tgt.want {
		if !slices.Contains(ids, id) {
			delete(tgt.want, id)
		}
	}
	tgt.lacks[0] = tgt.lacking()
	counts := checkEvents(t, sync.Options{Source: local, DocIDs: ids, BatchSize: 10, BulkDocsSize: 7}, tgt, true)
	if slices.Min(counts) != 50 || slices.Max(counts) != 50 {
		t.Fatalf("doc_ids push: pending + written %v, want 50", counts)
	}

	ctx := synctest.Ctx(t)
	rep, err := sync.New(sync.Options{Source: local, Target: remote, Continuous: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer rep.Stop()
	idle := func() bool { st := rep.Status(); return st.State == sync.StateIdle && st.Pending == 0 }
	testutil.Eventually(t, "idle with nothing pending", idle)
	if got, err := rep.PendingDocIDs(ctx); err != nil || len(got) != 0 {
		t.Fatalf("idle: %v, %v", got, err)
	}
	synctest.Put(t, db, "late", "", `{}`)
	if p, err := rep.IsDocumentPending(ctx, "late"); err != nil {
		t.Fatal(err)
	} else if !p {
		// Already sent: then the target has it.
		if _, st := synctest.RemoteGet(t, u, "late"); st != 200 {
			t.Fatalf("late is neither pending nor on the target (%d)", st)
		}
	}
	testutil.Eventually(t, "late sent", func() bool {
		_, st := synctest.RemoteGet(t, u, "late")
		return st == 200 && idle()
	})
	if p, err := rep.IsDocumentPending(ctx, "late"); err != nil || p {
		t.Fatalf("late after it was sent: %v, %v", p, err)
	}
}
