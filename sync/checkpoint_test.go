package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

func TestSeqTrackerOutOfOrder(t *testing.T) {
	tr := newSeqTracker(json.RawMessage(`"0-x"`))
	a, b, c := tr.add(2), tr.add(3), tr.add(1)
	if s, adv := tr.complete(c, json.RawMessage(`"c"`)); adv || string(s) != `"0-x"` {
		t.Fatalf("completing the third batch first advanced to %s", s)
	}
	if s, adv := tr.complete(a, json.RawMessage(`"a"`)); !adv || string(s) != `"a"` {
		t.Fatalf("after first: %s %v", s, adv)
	}
	if n, all := tr.pending(); n != 3 || all {
		t.Fatalf("pending = %d %v, want 3 false", n, all)
	}
	if s, adv := tr.complete(b, json.RawMessage(`"b"`)); !adv || string(s) != `"c"` {
		t.Fatalf("after all: %s %v, want \"c\"", s, adv)
	}
	if n, all := tr.pending(); n != 0 || !all {
		t.Fatalf("pending = %d %v", n, all)
	}
}

func TestCompareLogs(t *testing.T) {
	h := func(id, seq string) HistoryEntry {
		return HistoryEntry{SessionID: id, RecordedSeq: json.RawMessage(seq)}
	}
	cases := []struct {
		name     string
		src, tgt *ReplicationLog
		want     string
	}{
		{"missing", nil, &ReplicationLog{SessionID: "a"}, ""},
		{"same session", &ReplicationLog{SessionID: "a", SourceLastSeq: json.RawMessage(`"9-x"`)},
			&ReplicationLog{SessionID: "a", SourceLastSeq: json.RawMessage(`"7-x"`)}, `"9-x"`},
		{"common history", &ReplicationLog{SessionID: "c", History: []HistoryEntry{h("c", "30"), h("b", "20"), h("a", "10")}},
			&ReplicationLog{SessionID: "d", History: []HistoryEntry{h("d", "40"), h("b", "21"), h("a", "10")}}, "20"},
		{"nothing common", &ReplicationLog{SessionID: "c", History: []HistoryEntry{h("c", "30")}},
			&ReplicationLog{SessionID: "d", History: []HistoryEntry{h("d", "40")}}, ""},
	}
	for _, c := range cases {
		got, _ := compareLogs(c.src, c.tgt)
		if string(got) != c.want {
			t.Errorf("%s: start %s, want %s", c.name, got, c.want)
		}
	}
}

type uuidPeer struct {
	*memPeer
	uuid string
}

func (p uuidPeer) UUID() string { return p.uuid }

func TestReplicationID(t *testing.T) {
	local := uuidPeer{newMemPeer("/some/path"), "u1"}
	moved := uuidPeer{newMemPeer("/other/path"), "u1"}
	other := uuidPeer{newMemPeer("/some/path"), "u2"}
	remote := newMemPeer("http://h/db")
	base := Options{Source: local, Target: remote}
	id := ReplicationID(base)
	same := []Options{
		{Source: moved, Target: remote},
		{Source: local, Target: remote, DocIDs: nil},
		{Source: local, Target: remote, CreateTarget: true}, // creating the target replicates nothing else
	}
	for _, o := range same {
		if ReplicationID(o) != id {
			t.Errorf("id changed for %+v", o)
		}
	}
	if ReplicationID(Options{Source: local, Target: remote, DocIDs: []string{"b", "a"}}) !=
		ReplicationID(Options{Source: local, Target: remote, DocIDs: []string{"a", "b"}}) {
		t.Error("doc_ids order changed the id")
	}
	differ := []Options{
		{Source: other, Target: remote},
		{Source: remote, Target: local},
		{Source: local, Target: newMemPeer("http://h/db2")},
		{Source: local, Target: remote, Continuous: true},
		{Source: local, Target: remote, DocIDs: []string{"a"}},
		{Source: local, Target: remote, Selector: json.RawMessage(`{"a":1}`)},
		{Source: local, Target: remote, Filter: "d/f"},
		{Source: local, Target: remote, Filter: "d/f", QueryParams: map[string]string{"k": "v"}},
	}
	seen := map[string]int{id: -1}
	for i, o := range differ {
		got := ReplicationID(o)
		if j, dup := seen[got]; dup {
			t.Errorf("options %d and %d share id %s", i, j, got)
		}
		seen[got] = i
	}
}

func TestEventJSON(t *testing.T) {
	e := Event{Kind: EventDocFailure, Status: Status{State: StateActive, LastSeq: json.RawMessage(`"12-abc"`), Pending: -1},
		Err: couchdoc.ErrForbidden, Doc: &DocFailure{ID: "d", Rev: "1-a"}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["error"] != "forbidden: forbidden" || m["last_seq"] != "12-abc" || m["doc_id"] != "d" {
		t.Fatalf("%s %v", b, err)
	}
}

func TestReplicationLogsOnBothSides(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 10)
	var events atomic.Int64
	opts := Options{Source: src, Target: tgt, OnEvent: func(Event) { events.Add(1) }}
	for i := range maxHistory + 3 {
		src.put(fmt.Sprintf("more%d", i), "", `{}`)
		if _, err := Replicate(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
	}
	id := ReplicationID(opts)
	var logs [2]map[string]any
	for i, p := range []*memPeer{src, tgt} {
		raw, err := p.GetLocal(context.Background(), id)
		if err != nil {
			t.Fatalf("%s has no replication log: %v", p, err)
		}
		if err := json.Unmarshal(raw, &logs[i]); err != nil {
			t.Fatal(err)
		}
	}
	l := logs[1]
	hist, _ := l["history"].([]any)
	if l["session_id"] != logs[0]["session_id"] || l["source_last_seq"] != `63-x` || len(hist) != maxHistory ||
		l["replication_id_version"] != float64(ReplicationIDVersion) {
		t.Fatalf("log %v (history %d)", l, len(hist))
	}
	h0 := hist[0].(map[string]any)
	for _, k := range []string{"session_id", "start_time", "end_time", "start_last_seq", "end_last_seq", "recorded_seq",
		"missing_checked", "missing_found", "docs_read", "docs_written", "doc_write_failures"} {
		if _, ok := h0[k]; !ok {
			t.Errorf("history entry lacks %s: %v", k, h0)
		}
	}
	if h0["session_id"] != l["session_id"] || h0["docs_written"] != float64(1) {
		t.Errorf("latest entry %v", h0)
	}
	if events.Load() == 0 {
		t.Error("no events")
	}
	// Another replication (other options) does not reuse this checkpoint.
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, DocIDs: []string{"doc00001", "more3"}})
	if err != nil || res.StartSeq != nil || res.Stats.MissingChecked != 2 {
		t.Fatalf("filtered replication: %v %+v start %s", err, res.Stats, res.StartSeq)
	}
}

// failingBatch refuses, as a whole and with err, any _bulk_docs holding
// doc00150.
type failingBatch struct {
	*memPeer
	err error
}

func (p failingBatch) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	for _, d := range docs {
		if d.ID == "doc00150" {
			return nil, p.err
		}
	}
	return p.memPeer.BulkDocs(ctx, docs)
}

// TestFailedBatchIsNotCheckpointed: a request refused for something else
// than the documents it holds (here 403: no right to write) fails the
// replication, and the checkpoint stays before that batch.
func TestFailedBatchIsNotCheckpointed(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 300)
	res, err := Replicate(context.Background(), Options{Source: src, Target: failingBatch{tgt, couchdoc.Errorf(couchdoc.ErrForbidden, "refused")}, BatchSize: 100, Workers: 1})
	if !errors.Is(err, couchdoc.ErrForbidden) {
		t.Fatalf("err = %v", err)
	}
	if string(res.LastSeq) != `"100-x"` {
		t.Fatalf("checkpoint %s, want the end of the first batch", res.LastSeq)
	}
}

// TestRefusedDocFailsAlone: a request refused whole for one document it
// holds (400, as CouchDB answers a document its parser refuses) is split
// until that document is alone; it fails as a doc_write_failure and the
// replication writes the rest and checkpoints its end.
func TestRefusedDocFailsAlone(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 300)
	var mu gosync.Mutex
	var failed []DocFailure
	onEvent := func(e Event) {
		if e.Kind == EventDocFailure {
			mu.Lock()
			failed = append(failed, *e.Doc)
			mu.Unlock()
		}
	}
	res, err := Replicate(context.Background(), Options{Source: src, Target: failingBatch{tgt, couchdoc.Errorf(couchdoc.ErrBadRequest, "refused")},
		BatchSize: 100, Workers: 1, OnEvent: onEvent})
	if err != nil || res.Stats.DocsWritten != 299 || res.Stats.DocWriteFailures != 1 || string(res.LastSeq) != `"300-x"` {
		t.Fatalf("%v %+v %s", err, res.Stats, res.LastSeq)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failed) != 1 || failed[0].ID != "doc00150" || !errors.Is(failed[0].Err, couchdoc.ErrBadRequest) {
		t.Fatalf("failures %+v", failed)
	}
}

func TestSinceOverrideAndCheckpointInterval(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 100)
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, Since: json.RawMessage(`"60-x"`),
		BatchSize: 10, CheckpointInterval: time.Hour})
	if err != nil || res.Stats.DocsWritten != 40 || string(res.StartSeq) != `"60-x"` {
		t.Fatalf("%v %+v start %s", err, res.Stats, res.StartSeq)
	}
	// With a long interval only the final checkpoint is written (once per
	// peer), not one per batch.
	if n := tgt.count("PutLocal") + src.count("PutLocal"); n != 2 {
		t.Fatalf("%d checkpoint writes", n)
	}
}

// TestConcurrentRunsShareCheckpoints runs the same replication twice at
// once: both must finish, their checkpoint writes racing on the same
// _local documents.
func TestConcurrentRunsShareCheckpoints(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 500)
	opts := Options{Source: src, Target: tgt, BatchSize: 20}
	errs := make(chan error, 2)
	for range 2 {
		go func() { _, err := Replicate(context.Background(), opts); errs <- err }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if tgt.leafCount() != 500 {
		t.Fatalf("target has %d", tgt.leafCount())
	}
}
