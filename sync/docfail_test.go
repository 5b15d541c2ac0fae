package sync_test

import (
	"context"
	"fmt"
	"strings"
	gosync "sync"
	"testing"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/server"
	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// failureEvents collects the doc_failure events of a replication.
type failureEvents struct {
	mu   gosync.Mutex
	docs []sync.DocFailure
}

func (f *failureEvents) on(e sync.Event) {
	if e.Kind == sync.EventDocFailure && e.Doc != nil {
		f.mu.Lock()
		f.docs = append(f.docs, *e.Doc)
		f.mu.Unlock()
	}
}

// only checks that exactly one document failed, id, with an error whose
// text holds reason.
func (f *failureEvents) only(t *testing.T, id, reason string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.docs) != 1 || f.docs[0].ID != id || f.docs[0].Err == nil || !strings.Contains(f.docs[0].Err.Error(), reason) {
		t.Fatalf("doc failures %+v, want one for %s (%s)", f.docs, id, reason)
	}
}

// TestPullRefusedDocFailsAlone: a source (pouchdb-server) holding a
// document this store refuses (a rev id of 32 bytes that are not hex,
// which CouchDB refuses too) pulls everything else; that one document is
// a doc_write_failure and a doc_failure event naming it and the reason.
func TestPullRefusedDocFailsAlone(t *testing.T) {
	pouch := testpeer.PouchDB(t)
	u := pouch.CreateDB(t, "refused")
	var docs []any
	for i := range 40 {
		docs = append(docs, map[string]any{"_id": fmt.Sprintf("d%02d", i), "_rev": "2-import42", "n": i,
			"_revisions": map[string]any{"start": 2, "ids": []string{"import42", "x"}}})
	}
	bad := "1-" + strings.Repeat("z", 32)
	docs = append(docs[:20], append([]any{map[string]any{"_id": "bad", "_rev": bad, "n": -1}}, docs[20:]...)...)
	if st := testutil.DoJSON(context.Background(), t, "POST", u+"/_bulk_docs", map[string]any{"new_edits": false, "docs": docs}, nil); st != 201 {
		t.Fatalf("seed: %d", st)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	var ev failureEvents
	res, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Remote(t, u, nil), Target: synctest.Local(db), BatchSize: 10, OnEvent: ev.on})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocsWritten != 40 || res.Stats.DocWriteFailures != 1 {
		t.Fatalf("stats %+v", res.Stats)
	}
	ev.only(t, "bad", "Invalid rev format")
	info, err := db.Info(context.Background())
	if err != nil || info.DocCount != 40 {
		t.Fatalf("info %+v %v", info, err)
	}
	if d, err := db.Get(context.Background(), "d39", localdb.GetOptions{}); err != nil || d.Rev != "2-import42" {
		t.Fatalf("d39: %v %+v", err, d)
	}
}

// TestPushTooLargeFailsAlone: a target that refuses one document of a
// batch for its size (settee serve with a small request bound answers the
// whole _bulk_docs request 413) takes all the others; that one is a
// doc_write_failure and a doc_failure event.
func TestPushTooLargeFailsAlone(t *testing.T) {
	srv := servertest.Start(t, &server.Config{MaxBodySize: 64 << 10})
	u := srv.CreateDB(t, "small")
	db := localdbtest.OpenNamed(t, "local", nil)
	for i := range 30 {
		synctest.Put(t, db, fmt.Sprintf("d%02d", i), "", fmt.Sprintf(`{"n":%d}`, i))
	}
	synctest.Put(t, db, "big", "", `{"s":"`+strings.Repeat("x", 200<<10)+`"}`)
	var ev failureEvents
	res, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Local(db), Target: synctest.Remote(t, u, nil), OnEvent: ev.on})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocsWritten != 30 || res.Stats.DocWriteFailures != 1 {
		t.Fatalf("stats %+v", res.Stats)
	}
	ev.only(t, "big", "too_large")
	if n, _ := synctest.RemoteDocCount(t, u); n != 30 {
		t.Fatalf("target holds %d docs", n)
	}
}
