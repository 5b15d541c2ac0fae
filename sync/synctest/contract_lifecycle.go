package synctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
)

// seedRemote writes n documents "s00000".. to the remote over plain HTTP.
func seedRemote(t *testing.T, u string, n int) {
	t.Helper()
	for start := 0; start < n; start += 500 {
		docs := make([]map[string]any, 0, 500)
		for i := start; i < min(n, start+500); i++ {
			docs = append(docs, map[string]any{"_id": fmt.Sprintf("s%05d", i), "n": i})
		}
		if st := testutil.DoJSON(context.Background(), t, "POST", u+"/_bulk_docs", map[string]any{"docs": docs}, nil); st != 201 {
			t.Fatalf("seed remote: %d", st)
		}
	}
}

// editRemote updates documents s00000..s(n-1) on the remote.
func editRemote(t *testing.T, u string, n int) {
	t.Helper()
	docs := make([]map[string]any, 0, n)
	for i := range n {
		id := fmt.Sprintf("s%05d", i)
		d, st := RemoteGet(t, u, id)
		if st != 200 {
			t.Fatalf("get %s: %d", id, st)
		}
		docs = append(docs, map[string]any{"_id": id, "_rev": d.Rev, "n": i, "edited": true})
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", u+"/_bulk_docs", map[string]any{"docs": docs}, nil); st != 201 {
		t.Fatalf("edit remote: %d", st)
	}
}

// syncWatch syncs both ways and counts the EventSharedIdentity events.
func syncWatch(t *testing.T, db *localdb.DB, u string, shared *atomic.Int64) *sync.SyncResult {
	t.Helper()
	res, err := sync.Sync(Ctx(t), Local(db), Remote(t, u, nil), sync.Options{OnEvent: func(e sync.Event) {
		if e.Kind == sync.EventSharedIdentity {
			shared.Add(1)
		}
	}})
	if err != nil {
		t.Fatalf("sync %s: %v", db.Path(), err)
	}
	return res
}

// openClone opens a store made by localdb.Clone and checks its invariants
// when the test ends.
func openClone(t *testing.T, path string) *localdb.DB {
	t.Helper()
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.CheckInvariants(context.Background()); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		db.Close()
	})
	return db
}

// testCloneFromSeed: a seed store syncs with the remote, three clones are
// made from it, the remote changes 100 docs; each clone's first sync
// fetches only those, under a replication id (and checkpoint document) of
// its own, and the seed's checkpoint is left alone.
func testCloneFromSeed(t *testing.T, newDB Factory) {
	const n, edited = 1500, 100
	u := newDB(t)
	seedRemote(t, u, n)
	seed := localdbtest.OpenNamed(t, "seed", nil)
	first := syncBoth(t, Local(seed), Remote(t, u, nil))
	if first.Pull.Stats.DocsWritten != n {
		t.Fatalf("seed pull: %+v", first.Pull.Stats)
	}
	// The next push checks the docs that first pull brought in (as on any
	// store); a seed is shipped after that.
	syncBoth(t, Local(seed), Remote(t, u, nil))
	seedIDs := map[string]bool{first.Pull.ReplicationID: true, first.Push.ReplicationID: true}
	var clones []*localdb.DB
	for i := range 3 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("clone%d.db", i))
		if err := localdb.Clone(Ctx(t), seed.Path(), path); err != nil {
			t.Fatal(err)
		}
		c := openClone(t, path)
		if c.UUID() == seed.UUID() || len(c.Seeds()) != 1 || c.Seeds()[0] != seed.UUID() {
			t.Fatalf("clone %d: uuid %s seeds %v (seed %s)", i, c.UUID(), c.Seeds(), seed.UUID())
		}
		clones = append(clones, c)
	}
	editRemote(t, u, edited)
	ids := map[string]bool{}
	var shared atomic.Int64
	for i, c := range clones {
		res := syncWatch(t, c, u, &shared)
		if res.Pull.Stats.DocsWritten != edited || res.Pull.Stats.MissingChecked > edited+10 {
			t.Errorf("clone %d first pull: %+v, want %d docs fetched, not a full replication", i, res.Pull.Stats, edited)
		}
		if res.Push.Stats.MissingChecked > edited {
			t.Errorf("clone %d first push: %+v", i, res.Push.Stats)
		}
		for _, id := range []string{res.Pull.ReplicationID, res.Push.ReplicationID} {
			if seedIDs[id] || ids[id] {
				t.Errorf("clone %d shares replication id %s", i, id)
			}
			ids[id] = true
		}
		// The pull made progress, so it left its own checkpoint (a push
		// with nothing to send may not write one).
		if st := testutil.DoJSON(context.Background(), t, "GET", u+"/_local/"+res.Pull.ReplicationID, nil, nil); st != 200 {
			t.Errorf("clone %d: no checkpoint _local/%s on the remote (%d)", i, res.Pull.ReplicationID, st)
		}
		info, _ := c.Info(context.Background())
		if info.DocCount != n {
			t.Errorf("clone %d has %d docs, want %d", i, info.DocCount, n)
		}
		d, err := c.Get(context.Background(), "s00007", localdb.GetOptions{})
		if err != nil || d.Rev[:2] != "2-" {
			t.Errorf("clone %d: s00007 %v %v", i, d, err)
		}
	}
	for _, c := range clones { // a second sync reads the clones' own logs
		syncWatch(t, c, u, &shared)
	}
	if n := shared.Load(); n != 0 {
		t.Errorf("clones reported a shared identity %d times", n)
	}
	if len(ids) != 6 {
		t.Errorf("%d distinct replication ids for 3 clones, want 6 (push and pull each)", len(ids))
	}
	// The seed resumes from its own checkpoint, untouched by the clones.
	again := syncBoth(t, Local(seed), Remote(t, u, nil))
	if again.Pull.ReplicationID != first.Pull.ReplicationID || again.Pull.Stats.DocsWritten != edited || again.Pull.Stats.MissingChecked > edited+10 {
		t.Errorf("seed after the clones: %+v", again.Pull.Stats)
	}
}

// testPurgeThenPull: purges are local. A purged document stays gone while
// the remote does not change it (the checkpoint is past it), comes back
// whole when it changes there, and a push never deletes it on the remote.
func testPurgeThenPull(t *testing.T, newDB Factory) {
	u := newDB(t)
	seedRemote(t, u, 3)
	db := localdbtest.OpenNamed(t, "local", nil)
	remote := Remote(t, u, nil)
	syncBoth(t, Local(db), remote)
	d, err := db.Get(context.Background(), "s00001", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Purge(context.Background(), map[string][]string{"s00001": {d.Rev}}); err != nil {
		t.Fatal(err)
	}
	res := syncBoth(t, Local(db), remote)
	if _, err := db.Get(context.Background(), "s00001", localdb.GetOptions{}); err == nil || res.Pull.Stats.DocsWritten != 0 {
		t.Fatalf("purged doc came back unchanged: %v, %+v", err, res.Pull.Stats)
	}
	if rd, st := RemoteGet(t, u, "s00001"); st != 200 || rd.Rev != d.Rev {
		t.Fatalf("the purge reached the remote: %d %+v", st, rd)
	}
	editRemote(t, u, 2)
	res = syncBoth(t, Local(db), remote)
	got, err := db.Get(context.Background(), "s00001", localdb.GetOptions{Revs: true})
	if err != nil || got.Rev[:2] != "2-" || got.Revisions == nil || len(got.Revisions.IDs) != 2 {
		t.Fatalf("edited purged doc after pull: %+v, %v (stats %+v)", got, err, res.Pull.Stats)
	}
}

// testHandCopiedStore: a store file copied by hand (closed, then cp) keeps
// its UUID, so the two copies share replication ids and overwrite each
// other's checkpoint documents. That costs redundant work, never data: the
// checkpoint histories make each copy resume from a session it really
// holds. Both copies edit, all sync twice, everything converges.
func testHandCopiedStore(t *testing.T, newDB Factory) {
	u := newDB(t)
	seedRemote(t, u, 200)
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	a, err := localdb.Open(pa, nil)
	if err != nil {
		t.Fatal(err)
	}
	syncBoth(t, Local(a), Remote(t, u, nil))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(pa)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pb, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := openClone(t, pa), openClone(t, pb)
	if a.UUID() != b.UUID() {
		t.Fatal("a hand copy has another UUID")
	}
	PutDocs(t, a, "a", 20)
	PutDocs(t, b, "b", 30)
	editRemote(t, u, 10)
	var shared atomic.Int64
	for range 2 {
		syncWatch(t, a, u, &shared)
		syncWatch(t, b, u, &shared)
	}
	syncWatch(t, a, u, &shared)
	// Once both copies have checkpointed, each finds the other's session
	// in its place: the copy is detected.
	if shared.Load() == 0 {
		t.Error("no EventSharedIdentity for two stores sharing a UUID")
	}
	for _, db := range []*localdb.DB{a, b} {
		info, _ := db.Info(context.Background())
		if info.DocCount != 250 {
			t.Errorf("%s has %d docs, want 250", db.Path(), info.DocCount)
		}
		if d, err := db.Get(context.Background(), "s00003", localdb.GetOptions{}); err != nil || d.Rev[:2] != "2-" {
			t.Errorf("%s: s00003 %v %v", db.Path(), d, err)
		}
	}
	if n, _ := RemoteDocCount(t, u); n != 250 {
		t.Errorf("remote has %d docs, want 250", n)
	}
}
