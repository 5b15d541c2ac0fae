package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// The pending phase (-phases pending) checks the push's pending count on
// real pushes: -pending-docs single-revision documents (default 100,000)
// in a local store pushed to an empty database on each peer of -peers;
// then 1% of them are edited locally and the push resumes from its
// checkpoint. In each push, of total documents:
//
//   - At every event: Pending is known (from the first progress event
//     on), never rises, and Pending + DocsWritten = total (one new
//     revision each, so every document is either still pending or
//     written, never both or neither).
//   - After every checkpoint: the target is compared with the count. The
//     writes are paused (new _bulk_docs wait, those in flight finish and
//     are settled in the replicator's counters), then the replicator's
//     Status is taken and what the target still lacks is counted: the
//     documents less its doc_count for the first push (it started
//     empty), the edited documents whose new revision _revs_diff finds
//     missing for the resumed one. Pending must equal it, and
//     DocsWritten must equal total less it.
//   - At the end: _revs_diff of every local revision against the target
//     finds none missing, and Pending is 0.
//
// Any mismatch fails the phase. The seconds include the pauses.

// PendingRun is one peer's push with its pending checks.
type PendingRun struct {
	Peer string `json:"peer"`
	// Push is "initial" or "resumed" (after local edits).
	Push    string  `json:"push"`
	Docs    int     `json:"docs"`
	Seconds float64 `json:"seconds"`
	// Events seen, of which progress events; Checked is the comparisons
	// with the target after checkpoints.
	Events         int `json:"events"`
	ProgressEvents int `json:"progress_events"`
	Checked        int `json:"checked_against_target"`
	// FirstPending is the count at the first event that knew it.
	FirstPending int64 `json:"first_pending"`
	// FinalMissing is what _revs_diff found missing at the end.
	FinalMissing int      `json:"final_missing"`
	Mismatches   int      `json:"mismatches"`
	Examples     []string `json:"mismatch_examples,omitempty"`
}

// gatedTarget is the push target with its writes counted and pausable.
type gatedTarget struct {
	*couch.DB
	gate  gosync.RWMutex
	acked atomic.Int64 // revisions the target acknowledged
}

func (g *gatedTarget) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	g.gate.RLock()
	defer g.gate.RUnlock()
	res, err := g.DB.BulkDocs(ctx, docs)
	if err == nil {
		g.acked.Add(int64(len(docs) - len(res)))
	}
	return res, err
}

func (g *gatedTarget) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	g.gate.RLock()
	defer g.gate.RUnlock()
	err := g.DB.PutDoc(ctx, doc)
	if err == nil {
		g.acked.Add(1)
	}
	return err
}

// fillPendingSource writes n small single-revision documents into a new
// store at path.
func fillPendingSource(ctx context.Context, path string, n int) (*localdb.DB, error) {
	db, err := localdb.Open(path, nil)
	if err != nil {
		return nil, err
	}
	docs := make([]*couchdoc.Doc, 0, 1000)
	for i := 0; i < n; i++ {
		docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("p%07d", i), Body: json.RawMessage(fmt.Sprintf(`{"i":%d,"note":"pending check %d"}`, i, i%97))})
		if len(docs) == cap(docs) || i == n-1 {
			res, err := db.BulkDocs(ctx, docs, true)
			if err == nil {
				for _, r := range res {
					if r.Error != "" {
						err = fmt.Errorf("%s: %s", r.ID, r.Error)
						break
					}
				}
			}
			if err != nil {
				db.Close()
				return nil, err
			}
			docs = docs[:0]
		}
	}
	return db, nil
}

// pendingPhase runs the checked push against every peer.
func (b *bench) pendingPhase(ctx context.Context, peers []hubServer) error {
	n := b.cfg.PendingDocs
	dir := filepath.Join(b.dir, "pending")
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b.logf("pending: writing %d documents into a local store", n)
	src, err := fillPendingSource(ctx, filepath.Join(dir, "src.db"), n)
	if err != nil {
		return fmt.Errorf("pending: fill the source: %w", err)
	}
	defer src.Close()
	for _, p := range peers {
		what := "pending via " + p.name
		target := p.url + "/bench-pending"
		if err := createDB(ctx, target); err != nil {
			b.fail(what, err)
			continue
		}
		lacksAll := func(ctx context.Context) (int64, error) {
			info, err := dbInfo(ctx, target)
			if err != nil {
				return 0, err
			}
			return int64(n) - info.DocCount, nil
		}
		runs := []*PendingRun{}
		run, err := b.checkedPush(ctx, src, target, n, lacksAll)
		if err == nil {
			run.Push = "initial"
			runs = append(runs, run)
			var edited map[string]string
			if edited, err = editPendingSource(ctx, src, n); err == nil {
				rp, _ := couch.New(target, nil)
				if run, err = b.checkedPush(ctx, src, target, len(edited), func(ctx context.Context) (int64, error) {
					return lacking(ctx, rp, edited)
				}); err == nil {
					run.Push = fmt.Sprintf("resumed after %d edits", len(edited))
					runs = append(runs, run)
				}
			}
		}
		if !b.cfg.Keep {
			_ = deleteDB(context.Background(), target)
		}
		if err != nil {
			b.fail(what, err)
			continue
		}
		for _, run := range runs {
			run.Peer = p.name
			b.res.Pending = append(b.res.Pending, run)
			b.logf("%s, %s push: %d docs in %.1fs, %d events (%d progress), %d checks against the target after checkpoints, first pending %d, %d missing at the end, %d mismatches",
				what, run.Push, run.Docs, run.Seconds, run.Events, run.ProgressEvents, run.Checked, run.FirstPending, run.FinalMissing, run.Mismatches)
			if run.Mismatches > 0 {
				b.fail(what+", "+run.Push, fmt.Errorf("%d mismatches, first: %s", run.Mismatches, run.Examples[0]))
			} else {
				b.check(fmt.Sprintf("%s, %s push: pending exact at all %d events and %d checkpoints (pending + written = %d, never rising; = what the target lacks)", what, run.Push, run.Events, run.Checked, run.Docs))
			}
		}
	}
	return ctx.Err()
}

// checkedPush pushes src to target, an empty database, checking the
// pending count as the phase describes.
func (b *bench) checkedPush(ctx context.Context, src *localdb.DB, target string, n int, lacks func(context.Context) (int64, error)) (*PendingRun, error) {
	rp, err := couch.New(target, nil)
	if err != nil {
		return nil, err
	}
	g := &gatedTarget{DB: rp}
	run := &PendingRun{Docs: n, FirstPending: -1}
	var mu gosync.Mutex // guards run and the fields below
	mismatch := func(format string, args ...any) {
		run.Mismatches++
		if len(run.Examples) < 5 {
			run.Examples = append(run.Examples, fmt.Sprintf(format, args...))
		}
	}
	last := int64(-1)
	var lastCkpt string
	var rep *sync.Replicator
	onEvent := func(ev sync.Event) {
		mu.Lock()
		defer mu.Unlock()
		run.Events++
		if ev.Kind == sync.EventProgress {
			run.ProgressEvents++
		}
		if ev.Pending < 0 {
			if ev.Kind == sync.EventProgress || last >= 0 {
				mismatch("event %d (%s): pending unknown", run.Events, ev.Kind)
			}
			return
		}
		if run.FirstPending < 0 {
			run.FirstPending = ev.Pending
		}
		if last >= 0 && ev.Pending > last {
			mismatch("event %d: pending rose from %d to %d", run.Events, last, ev.Pending)
		}
		last = ev.Pending
		if ev.Pending+ev.Stats.DocsWritten != int64(n) {
			mismatch("event %d: pending %d + written %d != %d", run.Events, ev.Pending, ev.Stats.DocsWritten, n)
		}
		if c := string(ev.CheckpointedSeq); c != lastCkpt && c != "" {
			// Events come one at a time: the replication goes on
			// meanwhile, but no other event is delivered until the
			// target is compared with this checkpoint.
			lastCkpt = c
			if msg := b.checkAgainstTarget(ctx, rep, g, n, lacks); msg != "" {
				mismatch("%s", msg)
			}
			run.Checked++
		}
	}
	rep, err = sync.New(sync.Options{Source: localpeer.New(src), Target: g, OnEvent: onEvent})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := rep.Start(ctx); err != nil {
		return nil, err
	}
	err = rep.Wait()
	run.Seconds = time.Since(start).Seconds()
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	if st := rep.Status(); st.Pending != 0 || st.Stats.DocsWritten != int64(n) {
		mismatch("at the end: pending %d, written %d, want 0 and %d", st.Pending, st.Stats.DocsWritten, n)
	}
	run.FinalMissing, err = revsDiffMissing(ctx, src, rp)
	if err != nil {
		return nil, err
	}
	if run.FinalMissing != 0 {
		mismatch("at the end: _revs_diff finds %d revisions missing on the target", run.FinalMissing)
	}
	return run, nil
}

// checkAgainstTarget pauses the writes, waits until every acknowledged
// write is in the replicator's counters, and compares its Status with
// the target. It returns "" when they agree.
func (b *bench) checkAgainstTarget(ctx context.Context, rep *sync.Replicator, g *gatedTarget, n int, lacks func(context.Context) (int64, error)) string {
	g.gate.Lock()
	defer g.gate.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	st := rep.Status()
	for st.Stats.DocsWritten < g.acked.Load() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Sprintf("written %d never reached the %d acknowledged", st.Stats.DocsWritten, g.acked.Load())
		}
		time.Sleep(time.Millisecond)
		st = rep.Status()
	}
	missing, err := lacks(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return ""
		}
		return fmt.Sprintf("count what the target lacks: %v", err)
	}
	if st.Pending != missing || st.Stats.DocsWritten != int64(n)-missing {
		return fmt.Sprintf("after checkpoint %s: pending %d, written %d; the target lacks %d of %d", st.CheckpointedSeq, st.Pending, st.Stats.DocsWritten, missing, n)
	}
	return ""
}

// editPendingSource gives 1% of the n documents (at least one) a new
// revision, and returns their ids with the new revisions.
func editPendingSource(ctx context.Context, db *localdb.DB, n int) (map[string]string, error) {
	edited := map[string]string{}
	for i := 0; i < n; i += 100 {
		id := fmt.Sprintf("p%07d", i)
		d, err := db.Get(ctx, id, localdb.GetOptions{})
		if err != nil {
			return nil, err
		}
		rev, err := db.Put(ctx, &couchdoc.Doc{ID: id, Rev: d.Rev, Body: json.RawMessage(fmt.Sprintf(`{"i":%d,"edited":true}`, i))})
		if err != nil {
			return nil, err
		}
		edited[id] = rev
	}
	return edited, nil
}

// lacking counts the revisions of revs (id to rev) that the target lacks,
// with _revs_diff.
func lacking(ctx context.Context, target *couch.DB, revs map[string]string) (int64, error) {
	q := make(map[string][]string, len(revs))
	for id, rev := range revs {
		q[id] = []string{rev}
	}
	res, err := target.RevsDiff(ctx, q)
	var n int64
	for _, r := range res {
		n += int64(len(r.Missing))
	}
	return n, err
}

// revsDiffMissing asks the target, with _revs_diff, for every revision of
// the local store, and counts those it lacks.
func revsDiffMissing(ctx context.Context, src *localdb.DB, target *couch.DB) (int, error) {
	missing := 0
	batch := map[string][]string{}
	flush := func() error {
		res, err := target.RevsDiff(ctx, batch)
		for _, r := range res {
			missing += len(r.Missing)
		}
		clear(batch)
		return err
	}
	_, err := src.AllDocs(ctx, localdb.AllDocsOptions{}, func(row *localdb.AllDocsRow) error {
		batch[row.ID] = append(batch[row.ID], row.Rev)
		if len(batch) == 2000 {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	return missing, err
}
