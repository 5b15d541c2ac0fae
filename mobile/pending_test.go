package mobile

import (
	"testing"

	"github.com/settee/settee/internal/testpeer"
)

// TestPendingDocumentIDs: before a push the local changes are listed (no
// checkpoint yet); after it nothing is, and the push reports 0 pending;
// a later local write is listed from the checkpoint alone, before any
// replicator starts.
func TestPendingDocumentIDs(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "hub")
	d := openTest(t)
	for _, js := range []string{`{"_id":"b"}`, `{"_id":"a"}`, `{"_id":"c"}`} {
		must(d.Put(js))
	}
	r := must(NewReplicator(d, NewReplicatorConfig(url)))
	if ids := must(r.PendingDocumentIDs()); ids != `["a","b","c"]` {
		t.Fatalf("before the push: %s", ids)
	}
	if !must(r.IsDocumentPending("b")) || must(r.IsDocumentPending("zz")) {
		t.Fatal("IsDocumentPending before the push")
	}
	rec := newRecorder()
	r.SetListener(rec)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	st := rec.waitState(t, "stopped")
	if st.LastError != "" || st.PushPending != 0 || st.DocsWritten != 3 {
		t.Fatalf("after the push: %+v", st)
	}
	if ids := must(r.PendingDocumentIDs()); ids != `[]` {
		t.Fatalf("after the push: %s", ids)
	}
	must(d.Put(`{"_id":"d"}`))
	again := must(NewReplicator(d, NewReplicatorConfig(url)))
	if ids := must(again.PendingDocumentIDs()); ids != `["d"]` {
		t.Fatalf("a new replicator: %s", ids)
	}
	if must(again.IsDocumentPending("a")) || !must(again.IsDocumentPending("d")) {
		t.Fatal("IsDocumentPending after the push")
	}
	pullCfg := NewReplicatorConfig(url)
	pullCfg.Direction = "pull"
	if _, err := must(NewReplicator(d, pullCfg)).PendingDocumentIDs(); err == nil {
		t.Fatal("a pull-only replicator listed pending documents")
	}
}
