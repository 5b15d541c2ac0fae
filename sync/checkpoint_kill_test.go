package sync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
)

var errKilled = errors.New("killed")

// killable is a store whose checkpoint writes fail once killed: the
// replication then ends as a killed process does, without its final
// checkpoint. Everything else is the real store.
type killable struct {
	*localpeer.Peer
	killed *atomic.Bool
}

func (k killable) PutLocal(ctx context.Context, id string, body json.RawMessage) (string, error) {
	if k.killed.Load() {
		return "", errKilled
	}
	return k.Peer.PutLocal(ctx, id, body)
}

// checkpointSeq reads the source_last_seq recorded on p, nil if none.
func checkpointSeq(t *testing.T, p sync.Peer, repID string) json.RawMessage {
	t.Helper()
	raw, err := p.GetLocal(context.Background(), repID)
	if errors.Is(err, couchdoc.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var l sync.ReplicationLog
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	return l.SourceLastSeq
}

// leafState lists every document's leaves (sorted) and whether its winner
// is deleted.
func leafState(t *testing.T, db *localdb.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	_, err := db.Changes(context.Background(), localdb.ChangesOptions{AllDocs: true}, func(c *localdb.Change) error {
		revs := slices.Clone(c.Revs)
		slices.Sort(revs)
		out[c.ID] = fmt.Sprint(revs, c.Deleted)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestContinuousKilledResumesFromCheckpoint: a continuous replication with
// the default checkpoint interval writes many batches between checkpoints.
// Killed between two (no final checkpoint), the restarted replication
// resumes from the last checkpoint recorded, reads the changes after it
// again and ends with the target equal to the source: the revisions
// written before the kill are not written again or duplicated, and the
// changes made before and while it was down all arrive.
func TestContinuousKilledResumesFromCheckpoint(t *testing.T) {
	ctx := context.Background()
	src, dst := localdbtest.OpenNamed(t, "src", nil), localdbtest.OpenNamed(t, "dst", nil)
	revs := map[string]string{}
	put := func(id string) {
		t.Helper()
		rev, err := src.Put(ctx, &couchdoc.Doc{ID: id, Rev: revs[id], Body: json.RawMessage(fmt.Sprintf(`{"v":%q}`, revs[id]))})
		if err != nil {
			t.Fatal(err)
		}
		revs[id] = rev
	}
	docCount := func(db *localdb.DB) int64 {
		info, err := db.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.DocCount
	}
	for i := range 100 {
		put(fmt.Sprintf("d%03d", i))
	}

	var killed atomic.Bool
	opts := sync.Options{Source: killable{localpeer.New(src), &killed}, Target: killable{localpeer.New(dst), &killed},
		Continuous: true, BatchSize: 10}
	repID := sync.ReplicationID(opts)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := sync.Replicate(rctx, opts); done <- err }()

	// The first checkpoint comes one interval after the start, covering
	// the ten batches of the first 100 documents.
	testutil.Eventually(t, "the first checkpoint", func() bool { return checkpointSeq(t, opts.Target, repID) != nil })
	first := checkpointSeq(t, opts.Target, repID)
	testutil.Eventually(t, "the first 100 documents", func() bool { return docCount(dst) == 100 })
	// More batches: 50 new documents and 10 edits, written to the target
	// within the interval, so not checkpointed yet.
	for i := 100; i < 150; i++ {
		put(fmt.Sprintf("d%03d", i))
	}
	for i := range 10 {
		put(fmt.Sprintf("d%03d", i))
	}
	testutil.Eventually(t, "the next 60 revisions", func() bool {
		d, err := dst.Get(ctx, "d009", localdb.GetOptions{})
		return docCount(dst) == 150 && err == nil && d.Rev == revs["d009"]
	})
	killed.Store(true)
	cancel()
	<-done
	atKill := checkpointSeq(t, opts.Target, repID)
	if atKill == nil || string(checkpointSeq(t, opts.Source, repID)) != string(atKill) {
		t.Fatalf("checkpoints at the kill: target %s, source %s", atKill, checkpointSeq(t, opts.Source, repID))
	}
	t.Logf("first checkpoint %s, at the kill %s, source at %d", first, atKill, updateSeqOf(t, src))

	// While it is down: 20 more documents, 5 deletions.
	for i := 150; i < 170; i++ {
		put(fmt.Sprintf("d%03d", i))
	}
	for i := 20; i < 25; i++ {
		id := fmt.Sprintf("d%03d", i)
		rev, err := src.Delete(ctx, id, revs[id])
		if err != nil {
			t.Fatal(err)
		}
		revs[id] = rev
	}
	before := leafState(t, dst)

	// Restart, as a new process would: the same stores, fresh peers.
	opts2 := sync.Options{Source: localpeer.New(src), Target: localpeer.New(dst), Continuous: true, BatchSize: 10}
	if sync.ReplicationID(opts2) != repID {
		t.Fatal("the restarted replication has another id")
	}
	rctx, cancel = context.WithCancel(ctx)
	results := make(chan *sync.Result, 1)
	go func() { res, _ := sync.Replicate(rctx, opts2); results <- res }()
	testutil.Eventually(t, "the changes made while down", func() bool {
		_, err := dst.Get(ctx, "d169", localdb.GetOptions{})
		return err == nil && docCount(dst) == 165
	})
	cancel()
	res := <-results
	if res == nil {
		t.Fatal("no result")
	}
	if string(res.StartSeq) != string(atKill) {
		t.Errorf("restart began at %s, want the last checkpoint %s", res.StartSeq, atKill)
	}
	// The checkpoint was behind (the default interval for a continuous
	// replication): the revisions written after it are read again. The 60
	// of the second round took seqs 101-160; on a slow machine the interval
	// can pass while they are written, and a checkpoint at seq k > 100 leaves
	// only 160-k of them behind...
	var killSeq int64
	if err := json.Unmarshal(atKill, &killSeq); err != nil {
		t.Fatalf("checkpoint seq %s: %v", atKill, err)
	}
	wantChecked := int64(60 + 25)
	if killSeq > 100 {
		wantChecked = 160 - killSeq + 25
	}
	if int64(res.Stats.MissingChecked) < wantChecked {
		t.Errorf("restart checked %d revisions, want at least %d from the checkpoint at %d", res.Stats.MissingChecked, wantChecked, killSeq)
	}
	// ...but only the 25 revisions made while down were missing and
	// written; the others were found on the target already.
	if res.Stats.MissingFound != 25 || res.Stats.DocsWritten != 25 || res.Stats.DocWriteFailures != 0 {
		t.Errorf("restart stats %+v, want 25 missing and written", res.Stats)
	}
	got, want := leafState(t, dst), leafState(t, src)
	if len(got) != len(want) {
		t.Fatalf("target has %d documents, source %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: target %s, source %s", id, got[id], w)
		}
	}
	// What the target held before the restart is untouched, but for the
	// deletions made while it was down.
	for id, b := range before {
		if got[id] != b && !(id >= "d020" && id < "d025") {
			t.Errorf("%s changed on restart: %s -> %s", id, b, got[id])
		}
	}
	if err := dst.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}
}

func updateSeqOf(t *testing.T, db *localdb.DB) any {
	info, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.UpdateSeq
}
