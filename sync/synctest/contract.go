package synctest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
)

// Caps says what a remote supports beyond the replication protocol's core.
type Caps struct {
	// SelectorFeed: the remote's changes feed takes filter=_selector
	// (CouchDB 2+ and our server; pouchdb-server 4.2.0 crashes on it).
	SelectorFeed bool
	// DocDelCount: the remote's info reports doc_del_count.
	DocDelCount bool
	// AttsSince: the remote answers possible_ancestors in _revs_diff and
	// honours atts_since, so unchanged attachments are not sent again
	// (pouchdb-server 4.2.0 does neither).
	AttsSince bool
	// RevIDOrder: the remote picks the winner among leaves of one
	// generation by CouchDB's order of rev ids (couchdoc.CompareRevIDs);
	// pouchdb-server compares them as strings.
	RevIDOrder bool
	// AnyRevID: the remote keeps every rev id CouchDB takes; pouchdb-server
	// misreads ids holding '-' and histories of empty ids.
	AnyRevID bool
}

// Run runs the whole contract suite against the remote made by newDB.
func Run(t *testing.T, newDB Factory, caps Caps) {
	t.Run("Pull", func(t *testing.T) { testPull(t, newDB) })
	t.Run("FirstPull", func(t *testing.T) { testFirstPull(t, newDB) })
	t.Run("Push", func(t *testing.T) { testPush(t, newDB) })
	t.Run("SyncBothWays", func(t *testing.T) { testSync(t, newDB) })
	t.Run("ConflictsConverge", func(t *testing.T) { testConflicts(t, newDB) })
	t.Run("DeleteVsEdit", func(t *testing.T) { testDeleteVsEdit(t, newDB) })
	t.Run("Deletions", func(t *testing.T) { testDeletions(t, newDB, caps) })
	t.Run("Attachments", func(t *testing.T) { testAttachments(t, newDB, caps) })
	t.Run("LazyAttachments", func(t *testing.T) { testLazyAttachments(t, newDB, caps) })
	t.Run("FetchResumes", func(t *testing.T) { testFetchResumes(t, newDB) })
	t.Run("Continuous", func(t *testing.T) { testContinuous(t, newDB) })
	t.Run("CancelAndResume", func(t *testing.T) { testCancelResume(t, newDB) })
	t.Run("FilterDocIDs", func(t *testing.T) { testFilterDocIDs(t, newDB) })
	t.Run("FilterSelector", func(t *testing.T) { testFilterSelector(t, newDB, caps) })
	t.Run("NoOpResyncRequests", func(t *testing.T) { testNoOpRequests(t, newDB) })
	t.Run("CreateTarget", func(t *testing.T) { testCreateTarget(t, newDB) })
	t.Run("OfflineAndBack", func(t *testing.T) { testOffline(t, newDB) })
	t.Run("CloneFromSeed", func(t *testing.T) { testCloneFromSeed(t, newDB) })
	t.Run("PurgeThenPull", func(t *testing.T) { testPurgeThenPull(t, newDB) })
	t.Run("HandCopiedStore", func(t *testing.T) { testHandCopiedStore(t, newDB) })
	t.Run("RevIDs", func(t *testing.T) { testRevIDs(t, newDB, caps) })
}

func replicate(t testing.TB, opts sync.Options) *sync.Result {
	t.Helper()
	res, err := sync.Replicate(Ctx(t), opts)
	if err != nil {
		t.Fatalf("replicate %s -> %s: %v", opts.Source, opts.Target, err)
	}
	return res
}

func syncBoth(t testing.TB, local, remote sync.Peer) *sync.SyncResult {
	t.Helper()
	res, err := sync.Sync(Ctx(t), local, remote, sync.Options{})
	if err != nil {
		t.Fatalf("sync %s <-> %s: %v", local, remote, err)
	}
	return res
}

func testPull(t *testing.T, newDB Factory) {
	u := newDB(t)
	// Seed the remote over plain HTTP, independently of our code.
	docs := make([]map[string]any, 0, 120)
	for i := range 120 {
		docs = append(docs, map[string]any{"_id": fmt.Sprintf("p%03d", i), "n": i})
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", u+"/_bulk_docs", map[string]any{"docs": docs}, nil); st != 201 {
		t.Fatalf("seed: %d", st)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	res := replicate(t, sync.Options{Source: Remote(t, u, nil), Target: Local(db), BatchSize: 50})
	if res.Stats.DocsWritten != 120 || res.Stats.DocWriteFailures != 0 {
		t.Fatalf("stats %+v", res.Stats)
	}
	info, err := db.Info(context.Background())
	if err != nil || info.DocCount != 120 {
		t.Fatalf("local doc_count %v %v", info, err)
	}
	d, err := db.Get(context.Background(), "p042", localdb.GetOptions{})
	if err != nil || !bytes.Contains(d.Body, []byte(`"n":42`)) {
		t.Fatalf("p042: %v %s", err, d.Body)
	}
}

func testPush(t *testing.T, newDB Factory) {
	u := newDB(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	PutDocs(t, db, "d", 130)
	res := replicate(t, sync.Options{Source: Local(db), Target: Remote(t, u, nil), BatchSize: 40})
	if res.Stats.DocsWritten != 130 {
		t.Fatalf("stats %+v", res.Stats)
	}
	if n, _ := RemoteDocCount(t, u); n != 130 {
		t.Fatalf("remote doc_count %d", n)
	}
	local, _ := db.Get(context.Background(), "d00007", localdb.GetOptions{})
	rd, _ := RemoteGet(t, u, "d00007")
	if rd.Rev != local.Rev {
		t.Fatalf("rev on remote %s, local %s", rd.Rev, local.Rev)
	}
}

func testSync(t *testing.T, newDB Factory) {
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	PutDocs(t, a, "a", 30)
	PutDocs(t, b, "b", 20)
	syncBoth(t, Local(a), Remote(t, u, nil))
	syncBoth(t, Local(b), Remote(t, u, nil))
	res := syncBoth(t, Local(a), Remote(t, u, nil))
	if res.Pull.Stats.DocsWritten != 20 || res.Push.Stats.DocsWritten != 0 {
		t.Fatalf("third sync: push %+v pull %+v", res.Push.Stats, res.Pull.Stats)
	}
	for _, db := range []*localdb.DB{a, b} {
		info, _ := db.Info(context.Background())
		if info.DocCount != 50 {
			t.Fatalf("%s has %d docs, want 50", db.Path(), info.DocCount)
		}
	}
	// The push of the next sync checks the docs the last pull brought in
	// (revs_diff, checkpoint); the one after is a pure no-op.
	syncBoth(t, Local(a), Remote(t, u, nil))
	cnt := &Counter{}
	res = syncBoth(t, Local(a), Remote(t, u, cnt))
	if cnt.Total() > 5 || res.Push.Stats.MissingChecked+res.Pull.Stats.MissingChecked != 0 {
		t.Fatalf("no-op two-way sync: %d requests %v, stats %+v %+v", cnt.Total(), cnt.By(), res.Push.Stats, res.Pull.Stats)
	}
}

// leaves returns a document's winner and sorted conflicts on a store.
func leaves(t testing.TB, db *localdb.DB, id string) (string, []string) {
	t.Helper()
	d, err := db.Get(context.Background(), id, localdb.GetOptions{Conflicts: true})
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	c := slices.Clone(d.Conflicts)
	slices.Sort(c)
	return d.Rev, c
}

func testConflicts(t *testing.T, newDB Factory) {
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	r1 := Put(t, a, "doc", "", `{"v":0}`)
	syncBoth(t, Local(a), Remote(t, u, nil))
	syncBoth(t, Local(b), Remote(t, u, nil))
	// Concurrent edits on both devices, and two generations on one of them.
	Put(t, a, "doc", r1, `{"v":"a"}`)
	rb := Put(t, b, "doc", r1, `{"v":"b"}`)
	Put(t, b, "doc", rb, `{"v":"b2"}`)
	for range 2 {
		syncBoth(t, Local(a), Remote(t, u, nil))
		syncBoth(t, Local(b), Remote(t, u, nil))
	}
	wa, ca := leaves(t, a, "doc")
	wb, cb := leaves(t, b, "doc")
	rd, _ := RemoteGet(t, u, "doc")
	cr := slices.Clone(rd.Conflicts)
	slices.Sort(cr)
	if wa != wb || wa != rd.Rev || !slices.Equal(ca, cb) || !slices.Equal(ca, cr) || len(ca) != 1 {
		t.Fatalf("not converged: a %s %v, b %s %v, remote %s %v", wa, ca, wb, cb, rd.Rev, cr)
	}
}

func testDeletions(t *testing.T, newDB Factory, caps Caps) {
	u := newDB(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	r := Put(t, db, "gone", "", `{"x":1}`)
	Put(t, db, "remote-gone", "", `{"x":2}`)
	syncBoth(t, Local(db), Remote(t, u, nil))
	if _, err := db.Delete(context.Background(), "gone", r); err != nil {
		t.Fatal(err)
	}
	rd, _ := RemoteGet(t, u, "remote-gone")
	if st := testutil.DoJSON(context.Background(), t, "DELETE", u+"/remote-gone?rev="+rd.Rev, nil, nil); st != 200 {
		t.Fatalf("remote delete: %d", st)
	}
	syncBoth(t, Local(db), Remote(t, u, nil))
	if _, st := RemoteGet(t, u, "gone"); st != 404 {
		t.Fatalf("deleted doc still on remote: %d", st)
	}
	if _, err := db.Get(context.Background(), "remote-gone", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("remote deletion not pulled: %v", err)
	}
	n, del := RemoteDocCount(t, u)
	if n != 0 || caps.DocDelCount && del != 2 {
		t.Fatalf("remote counts %d/%d", n, del)
	}
}

func testFilterDocIDs(t *testing.T, newDB Factory) {
	u := newDB(t)
	src := localdbtest.OpenNamed(t, "src", nil)
	PutDocs(t, src, "f", 20)
	replicate(t, sync.Options{Source: Local(src), Target: Remote(t, u, nil)})
	db := localdbtest.OpenNamed(t, "local", nil)
	res := replicate(t, sync.Options{Source: Remote(t, u, nil), Target: Local(db), DocIDs: []string{"f00003", "f00011"}})
	info, _ := db.Info(context.Background())
	if res.Stats.DocsWritten != 2 || info.DocCount != 2 {
		t.Fatalf("doc_ids pull wrote %d, store has %d", res.Stats.DocsWritten, info.DocCount)
	}
	if _, err := db.Get(context.Background(), "f00011", localdb.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func testFilterSelector(t *testing.T, newDB Factory, caps Caps) {
	u := newDB(t)
	src := localdbtest.OpenNamed(t, "src", nil)
	PutDocs(t, src, "s", 20) // type t0 for even i, t1 for odd
	sel := json.RawMessage(`{"type":"t1"}`)
	// Push with a selector (matched by the local store).
	res := replicate(t, sync.Options{Source: Local(src), Target: Remote(t, u, nil), Selector: sel})
	if res.Stats.DocsWritten != 10 {
		t.Fatalf("selector push wrote %d", res.Stats.DocsWritten)
	}
	if !caps.SelectorFeed {
		return // the pull half needs filter=_selector on the remote
	}
	// Push everything to the remote, then pull back with a selector.
	replicate(t, sync.Options{Source: Local(src), Target: Remote(t, u, nil)})
	db := localdbtest.OpenNamed(t, "local", nil)
	res = replicate(t, sync.Options{Source: Remote(t, u, nil), Target: Local(db), Selector: json.RawMessage(`{"type":"t0"}`)})
	info, _ := db.Info(context.Background())
	if res.Stats.DocsWritten != 10 || info.DocCount != 10 {
		t.Fatalf("selector pull wrote %d, store has %d", res.Stats.DocsWritten, info.DocCount)
	}
}

// testDeleteVsEdit: a document deleted on one device and edited on the
// other converges to the edit everywhere (a live leaf beats a tombstone),
// with no live conflict left.
func testDeleteVsEdit(t *testing.T, newDB Factory) {
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	r1 := Put(t, a, "doc", "", `{"v":0}`)
	syncBoth(t, Local(a), Remote(t, u, nil))
	syncBoth(t, Local(b), Remote(t, u, nil))
	if _, err := a.Delete(context.Background(), "doc", r1); err != nil {
		t.Fatal(err)
	}
	edit := Put(t, b, "doc", r1, `{"v":"edited"}`)
	for range 2 {
		syncBoth(t, Local(a), Remote(t, u, nil))
		syncBoth(t, Local(b), Remote(t, u, nil))
	}
	wa, ca := leaves(t, a, "doc")
	wb, cb := leaves(t, b, "doc")
	rd, _ := RemoteGet(t, u, "doc")
	if wa != edit || wb != edit || rd.Rev != edit || len(ca)+len(cb)+len(rd.Conflicts) != 0 {
		t.Fatalf("a %s %v, b %s %v, remote %s %v; want %s everywhere", wa, ca, wb, cb, rd.Rev, rd.Conflicts, edit)
	}
}

func testNoOpRequests(t *testing.T, newDB Factory) {
	u := newDB(t)
	src := localdbtest.OpenNamed(t, "src", nil)
	PutDocs(t, src, "n", 600)
	replicate(t, sync.Options{Source: Local(src), Target: Remote(t, u, nil)})
	db := localdbtest.OpenNamed(t, "local", nil)
	cnt := &Counter{}
	first := replicate(t, sync.Options{Source: Remote(t, u, cnt), Target: Local(db)})
	if first.Stats.DocsRead != 600 || first.Stats.DocsWritten != 600 {
		t.Fatalf("first pull: %+v", first.Stats)
	}
	by := cnt.By()
	if by["GET doc"] > 0 && by["POST _bulk_get"] > 0 {
		t.Fatalf("fetched both with _bulk_get and per doc: %v", by)
	}
	before := cnt.Total()
	second := replicate(t, sync.Options{Source: Remote(t, u, cnt), Target: Local(db)})
	if got := cnt.Total() - before; got > 5 {
		t.Fatalf("no-op pull made %d requests (want <= 5): %v", got, cnt.By())
	}
	if second.Stats.DocsRead != 0 || second.Stats.MissingChecked != 0 {
		t.Fatalf("no-op pull fetched: %+v", second.Stats)
	}
	t.Logf("first pull of 600 docs: %d requests %v; no-op pull: %d", before, by, cnt.Total()-before)
}

func testCreateTarget(t *testing.T, newDB Factory) {
	u := newDB(t) + "-created"
	db := localdbtest.OpenNamed(t, "local", nil)
	PutDocs(t, db, "x", 3)
	_, err := sync.Replicate(Ctx(t), sync.Options{Source: Local(db), Target: Remote(t, u, nil)})
	var pe *sync.PeerError
	if !errors.As(err, &pe) || pe.Role != "target" || !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("missing target: %v", err)
	}
	res := replicate(t, sync.Options{Source: Local(db), Target: Remote(t, u, nil), CreateTarget: true})
	if n, _ := RemoteDocCount(t, u); n != 3 || res.Stats.DocsWritten != 3 {
		t.Fatalf("created target has %d docs", n)
	}
	// A sync creates the missing remote too: its pull, which reads the
	// remote, does not fail before the push has made it.
	u2 := newDB(t) + "-synced"
	sres, err := sync.Sync(Ctx(t), Local(db), Remote(t, u2, nil), sync.Options{CreateTarget: true})
	if err != nil {
		t.Fatalf("sync with CreateTarget to a missing remote: %v", err)
	}
	if n, _ := RemoteDocCount(t, u2); n != 3 || sres.Push.Stats.DocsWritten != 3 {
		t.Fatalf("the remote a sync created has %d docs", n)
	}
}
