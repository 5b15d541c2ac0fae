package sync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

func fill(p *memPeer, n int) {
	for i := range n {
		p.put(fmt.Sprintf("doc%05d", i), "", fmt.Sprintf(`{"i":%d}`, i))
	}
}

func TestPipelineOneShotAndResume(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 1234)
	opts := Options{Source: src, Target: tgt, BatchSize: 100, BulkDocsSize: 37, Workers: 3}
	res, err := Replicate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocsWritten != 1234 || res.Stats.DocsRead != 1234 || tgt.leafCount() != 1234 {
		t.Fatalf("stats %+v, target leaves %d", res.Stats, tgt.leafCount())
	}
	if string(res.LastSeq) != `"1234-x"` {
		t.Fatalf("last seq %s", res.LastSeq)
	}
	// A second run resumes from the checkpoint: one changes request, no
	// revs_diff, nothing fetched.
	before := src.count("Changes")
	res, err = Replicate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if src.count("Changes")-before != 1 || res.Stats.MissingChecked != 0 {
		t.Fatalf("no-op run: %d changes requests, stats %+v", src.count("Changes")-before, res.Stats)
	}
	// New changes on the source only transfer those.
	src.put("new", "", `{}`)
	res, err = Replicate(context.Background(), opts)
	if err != nil || res.Stats.DocsWritten != 1 || res.Stats.MissingChecked != 1 {
		t.Fatalf("incremental: %+v %v", res.Stats, err)
	}
}

func TestPipelineOutOfOrderCheckpoint(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 300)
	tgt.delay = time.Millisecond
	var mu gosync.Mutex
	var ckpts []string
	opts := Options{Source: src, Target: tgt, BatchSize: 10, BulkDocsSize: 3, Workers: 4, noEmptyTargetShortcut: true,
		OnEvent: func(e Event) {
			if e.Kind == EventProgress && e.CheckpointedSeq != nil {
				mu.Lock()
				ckpts = append(ckpts, string(e.CheckpointedSeq))
				mu.Unlock()
			}
		}}
	if _, err := Replicate(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	// Every checkpoint must cover all changes up to it: the docs with a
	// seq at or below it are on the target.
	for _, c := range ckpts {
		n := src.seqOf(json.RawMessage(c))
		for i := int64(0); i < n; i++ {
			id := fmt.Sprintf("doc%05d", i)
			tgt.mu.Lock()
			_, ok := tgt.docs[id]
			tgt.mu.Unlock()
			if !ok {
				t.Fatalf("checkpoint %s recorded but %s is not on the target yet", c, id)
			}
		}
	}
	if tgt.leafCount() != 300 {
		t.Fatalf("target has %d docs", tgt.leafCount())
	}
}

func TestPipelineTransientRetryAndDocFailure(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 50)
	src.put("bad", "", `{"x":"forbidden"}`)
	var fails atomic.Int32
	tgt.fail = func(m string) error {
		if m == "BulkDocs" && fails.Add(1) <= 2 {
			return &couchdoc.Error{Status: http.StatusServiceUnavailable, Name: "unavailable", Reason: "try later"}
		}
		return nil
	}
	var failed []string
	opts := Options{Source: src, Target: tgt, RetryDelay: time.Millisecond, OnEvent: func(e Event) {
		if e.Kind == EventDocFailure {
			failed = append(failed, e.Doc.ID)
		}
	}}
	res, err := Replicate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocWriteFailures != 1 || res.Stats.DocsWritten != 50 || len(failed) != 1 || failed[0] != "bad" {
		t.Fatalf("stats %+v failed %v", res.Stats, failed)
	}
	if !errors.Is(res.DocFailures[0].Err, couchdoc.ErrForbidden) {
		t.Fatalf("failure error %v", res.DocFailures[0].Err)
	}
}

func TestPipelinePermanentErrorNamesPeer(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	src.fail = func(m string) error {
		if m == "Info" {
			return couchdoc.ErrUnauthorized
		}
		return nil
	}
	_, err := Replicate(context.Background(), Options{Source: src, Target: tgt})
	var pe *PeerError
	if !errors.As(err, &pe) || pe.Role != "source" || !errors.Is(err, couchdoc.ErrUnauthorized) {
		t.Fatalf("err = %v", err)
	}
	if src.count("Info") != 1 {
		t.Fatalf("401 was retried: %d calls", src.count("Info"))
	}
}

func TestPipelineAttachmentsStreamed(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	big := make([]byte, 100<<10)
	src.store(&couchdoc.Doc{ID: "att", Rev: "1-" + couchdoc.NewRevHash(false, "", []byte("{}"), nil), Body: json.RawMessage(`{}`),
		Attachments: map[string]*couchdoc.Attachment{"a.bin": {Name: "a.bin", ContentType: "application/octet-stream", Data: big, Length: int64(len(big))}}})
	if _, err := Replicate(context.Background(), Options{Source: src, Target: tgt}); err != nil {
		t.Fatal(err)
	}
	if tgt.putDocs.Load() != 1 || len(tgt.docs["att"].leaves) != 1 {
		t.Fatalf("PutDoc calls %d", tgt.putDocs.Load())
	}
}

func TestContinuousCancelAndResume(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 20)
	ctx, cancel := context.WithCancel(context.Background())
	idle := make(chan struct{}, 10)
	r, err := New(Options{Source: src, Target: tgt, Continuous: true, BatchSize: 7, OnEvent: func(e Event) {
		if e.Kind == EventState && e.State == StateIdle {
			idle <- struct{}{}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle := func() {
		select {
		case <-idle:
		case <-time.After(20 * time.Second):
			t.Fatalf("never idle: %+v", r.Status())
		}
	}
	waitIdle()
	src.put("later", "", `{"v":1}`)
	deadline := time.Now().Add(20 * time.Second)
	for tgt.leafCount() != 21 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if tgt.leafCount() != 21 {
		t.Fatalf("continuous did not pick up the change: %d", tgt.leafCount())
	}
	cancel()
	if err := r.Wait(); err != nil {
		t.Fatalf("stopped replication returned %v", err)
	}
	if st := r.Status(); st.State != StateStopped || string(st.CheckpointedSeq) != `"21-x"` {
		t.Fatalf("status after stop: %+v", st)
	}
}

func TestBulkDocsTooLargeSplits(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 40)
	var calls atomic.Int32
	big := &tooLargePeer{memPeer: tgt, max: 8, calls: &calls}
	res, err := Replicate(context.Background(), Options{Source: src, Target: big, noEmptyTargetShortcut: true})
	if err != nil || res.Stats.DocsWritten != 40 || tgt.leafCount() != 40 {
		t.Fatalf("%v %+v", err, res)
	}
}

type tooLargePeer struct {
	*memPeer
	max   int
	calls *atomic.Int32
}

func (p *tooLargePeer) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	p.calls.Add(1)
	if len(docs) > p.max {
		return nil, couchdoc.ErrTooLarge
	}
	return p.memPeer.BulkDocs(ctx, docs)
}

// noBulkGet has a _bulk_get that the server does not know (404).
type noBulkGet struct {
	*memPeer
	calls atomic.Int32
}

func (p *noBulkGet) BulkGet(ctx context.Context, reqs []BulkGetRequest, fn func(*couchdoc.Doc, error) error) error {
	p.calls.Add(1)
	return fmt.Errorf("%w: 404 not_found", ErrNoBulkGet)
}

func TestBulkGetFallsBackToOpenRevs(t *testing.T) {
	src, tgt := &noBulkGet{memPeer: newMemPeer("src")}, newMemPeer("tgt")
	fill(src.memPeer, 30)
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, BatchSize: 10, Workers: 1})
	if err != nil || res.Stats.DocsWritten != 30 {
		t.Fatalf("%v %+v", err, res)
	}
	if src.calls.Load() != 1 || src.count("OpenRevs") != 30 {
		t.Fatalf("bulk_get tried %d times, open_revs %d", src.calls.Load(), src.count("OpenRevs"))
	}
}

func TestContinuousGoesOfflineAndBack(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 5)
	var down atomic.Bool
	down.Store(true)
	src.fail = func(m string) error {
		if down.Load() {
			return &couchdoc.Error{Status: http.StatusBadGateway, Name: "bad_gateway", Reason: "proxy"}
		}
		return nil
	}
	states := make(chan State, 100)
	r, err := New(Options{Source: src, Target: tgt, Continuous: true, Retries: 1,
		RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond,
		OnEvent: func(e Event) {
			if e.Kind == EventState {
				select {
				case states <- e.State:
				default:
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	waitState := func(want State) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case s := <-states:
				if s == want {
					return
				}
			case <-deadline:
				t.Fatalf("never reached %s: %+v", want, r.Status())
			}
		}
	}
	waitState(StateOffline)
	if st := r.Status(); st.LastError == nil || !errors.Is(st.LastError, couchdoc.ErrNotFound) && couchdoc.StatusOf(st.LastError) != http.StatusBadGateway {
		t.Fatalf("offline status %+v", st)
	}
	down.Store(false)
	waitState(StateIdle)
	if tgt.leafCount() != 5 {
		t.Fatalf("target has %d docs after coming back", tgt.leafCount())
	}
	if err := r.Stop(); err != nil {
		t.Fatal(err)
	}
}

// flakyFetch fails the first open_revs call after some documents went by.
type flakyFetch struct {
	*memPeer
	failed atomic.Bool
}

func (p *flakyFetch) OpenRevs(ctx context.Context, id string, revs, attsSince []string, fn func(*couchdoc.Doc, error) error) error {
	if id == "doc00007" && !p.failed.Swap(true) {
		return &couchdoc.Error{Status: http.StatusServiceUnavailable, Name: "unavailable"}
	}
	return p.memPeer.OpenRevs(ctx, id, revs, attsSince, fn)
}

func TestFetchRetryDoesNotRewrite(t *testing.T) {
	src, tgt := &flakyFetch{memPeer: newMemPeer("src")}, newMemPeer("tgt")
	fill(src.memPeer, 20)
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, BulkDocsSize: 3, RetryDelay: time.Millisecond})
	if err != nil || !src.failed.Load() {
		t.Fatal(err)
	}
	if res.Stats.DocsWritten != 20 || res.Stats.DocsRead != 20 || tgt.leafCount() != 20 {
		t.Fatalf("stats after a retried fetch %+v", res.Stats)
	}
}

// TestUnitsFillAcrossChunks checks that _bulk_docs units fill across the
// fetch chunks of a batch, and that a chunk retried after a transient
// failure neither drops nor repeats the revisions queued before it.
func TestUnitsFillAcrossChunks(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	fill(src, 1000)
	var opens atomic.Int64
	src.fail = func(m string) error {
		if m == "OpenRevs" && opens.Add(1) == 15 { // the 5th doc of the 2nd chunk
			return &couchdoc.Error{Status: http.StatusServiceUnavailable, Name: "unavailable"}
		}
		return nil
	}
	var written atomic.Int64
	var sizes []int
	var mu gosync.Mutex
	opts := Options{Source: src, Target: &sizeRecorder{memPeer: tgt, sizes: &sizes, mu: &mu, n: &written},
		BatchSize: 1000, BulkGetSize: 10, BulkDocsSize: 250, Workers: 1, Retries: 3, RetryDelay: time.Millisecond}
	res, err := Replicate(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocsWritten != 1000 || res.Stats.DocsRead != 1000 || written.Load() != 1000 || tgt.leafCount() != 1000 {
		t.Fatalf("stats %+v, docs sent %d, target leaves %d", res.Stats, written.Load(), tgt.leafCount())
	}
	if fmt.Sprint(sizes) != "[250 250 250 250]" {
		t.Fatalf("_bulk_docs sizes %v, want 4 full units of 250 across chunks of 10", sizes)
	}
}

// sizeRecorder records the size of each BulkDocs call.
type sizeRecorder struct {
	*memPeer
	sizes *[]int
	mu    *gosync.Mutex
	n     *atomic.Int64
}

func (p *sizeRecorder) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	p.mu.Lock()
	*p.sizes = append(*p.sizes, len(docs))
	p.mu.Unlock()
	p.n.Add(int64(len(docs)))
	return p.memPeer.BulkDocs(ctx, docs)
}
