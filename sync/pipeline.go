package sync

import (
	"context"
	"encoding/json"
	"slices"
	gosync "sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/settee/settee/couchdoc"
)

// session is the state one pass of the pipeline shares.
type session struct {
	startSeq    json.RawMessage
	emptyTarget bool // the target was empty with no checkpoint at the start
	tracker     *seqTracker
	cp          *checkpointer
	written     atomic.Bool // writes not yet made durable by EnsureFullCommit
	caughtUp    atomic.Bool // the reader is at the end of the feed
	firstPass   atomic.Bool // the reader reached the end of the feed once
}

// batch is one response of the changes feed travelling down the pipeline.
// It completes (and may be checkpointed) when every write it caused is done.
type batch struct {
	n       int64
	rows    []*couchdoc.Change
	seq     json.RawMessage // the feed's sequence after this batch
	assume  bool            // skip revs_diff: everything is missing
	ready   []*couchdoc.Doc // revisions the feed carried in full (feedDoc)
	missing []missingDoc
	refs    atomic.Int64 // holds: the stage owning it + writes in flight
	// open counts, per document still pending, the revisions left to
	// handle (guarded by replication.mu; see replication.pendingLocked).
	open map[string]int
}

type missingDoc struct {
	id        string
	revs      []string
	ancestors []string
}

// writeUnit is one _bulk_docs request of a batch.
type writeUnit struct {
	b     *batch
	docs  []*couchdoc.Doc
	bytes int
}

// pipeline runs reader -> revs_diff -> fetch workers -> writer, with a
// checkpointer beside them, under one errgroup with bounded channels. It
// returns when the feed ended (one-shot) and everything read was written,
// or on the first error.
func (r *replication) pipeline(ctx context.Context, s *session) error {
	g, gctx := errgroup.WithContext(ctx)
	changes := make(chan *batch, 1)
	diffed := make(chan *batch, r.opts.Workers)
	writes := make(chan *writeUnit, r.opts.Workers)
	ckpt := make(chan struct{}, 1)
	writerDone := make(chan struct{})

	g.Go(func() error { return r.readChanges(gctx, s, changes, ckpt) })
	g.Go(func() error { return r.diffRevs(gctx, s, changes, diffed, ckpt) })
	var fetchers gosync.WaitGroup
	for range r.opts.Workers {
		fetchers.Add(1)
		g.Go(func() error {
			defer fetchers.Done()
			for b := range diffed {
				if err := r.fetchBatch(gctx, s, b, writes); err != nil {
					return err
				}
				r.release(s, b, ckpt)
			}
			return nil
		})
	}
	g.Go(func() error { fetchers.Wait(); close(writes); return nil })
	g.Go(func() error {
		defer close(writerDone)
		return r.writeDocs(gctx, s, writes, ckpt)
	})
	g.Go(func() error { return r.checkpointLoop(gctx, s, ckpt, writerDone) })
	return g.Wait()
}

// release drops one hold on b; the last one completes the batch.
func (r *replication) release(s *session, b *batch, ckpt chan<- struct{}) {
	if b.refs.Add(-1) != 0 {
		return
	}
	_, advanced := s.tracker.complete(b.n, b.seq)
	if advanced {
		select {
		case ckpt <- struct{}{}:
		default:
		}
	}
	r.mu.Lock()
	r.closeDocsLocked(b)
	r.updated = time.Now()
	r.mu.Unlock()
	r.maybeIdle(s)
	r.emit(Event{Kind: EventProgress})
}

// maybeIdle moves a continuous replication that caught up and wrote all it
// read to idle.
func (r *replication) maybeIdle(s *session) {
	if !r.opts.Continuous || !s.caughtUp.Load() {
		return
	}
	if _, all := s.tracker.pending(); all {
		r.setState(StateIdle, nil)
	}
}

// readChanges reads the source's feed in batches of BatchSize rows: a
// normal feed for a one-shot replication (until a short batch), longpoll
// requests for a continuous one (forever). Sequences are passed back as
// they came.
func (r *replication) readChanges(ctx context.Context, s *session, out chan<- *batch, ckpt chan<- struct{}) error {
	defer close(out)
	src := r.opts.Source
	since := s.startSeq
	feed := "normal"
	if r.opts.Continuous {
		feed = "longpoll"
	}
	first, full := true, false
	for {
		var rows []*couchdoc.Change
		var last json.RawMessage
		opts := ChangesOptions{
			Since: since, Limit: r.opts.BatchSize, Feed: feed, Heartbeat: r.opts.Heartbeat,
			DocIDs: r.opts.DocIDs, Selector: r.opts.Selector, Filter: r.opts.Filter, QueryParams: r.opts.QueryParams,
		}
		if s.emptyTarget && !s.firstPass.Load() && !r.noFeedDocs.Load() {
			opts.IncludeDocs = true
		}
		if first || full {
			// Do not park the first request (report the start quickly), nor
			// the one after a full batch: with nothing more to read, a
			// longpoll would wait for the next change and the replication
			// would never be seen caught up (idle).
			opts.Feed = "normal"
		}
		unread := int64(-1)
		opts.OnPending = func(n int64) { unread = n }
		calls := 0
		err := r.retry(ctx, func() (err error) {
			calls++
			rows = rows[:0]
			unread = -1
			docBytes := 0
			keep := func(c *couchdoc.Change) error {
				if len(c.Doc) > 0 {
					if docBytes += len(c.Doc); docBytes > feedDocsBytes {
						c.Doc = nil
					}
				}
				if c.ID != "" && len(c.Changes) > 0 {
					rows = append(rows, c)
				}
				return nil
			}
			last, err = src.Changes(ctx, opts, keep)
			if err != nil && opts.IncludeDocs && feedDocsRefused(err) {
				// Ask again at once without the documents.
				r.noFeedDocs.Store(true)
				opts.IncludeDocs = false
				rows = rows[:0]
				unread = -1
				last, err = src.Changes(ctx, opts, keep)
			}
			return err
		})
		if err != nil {
			return peerErr("source", src, "read changes", err)
		}
		if calls > 1 && s.emptyTarget {
			// A feed read again after a failure may repeat changes already
			// handed on (a cluster maps a lost node's shard positions onto
			// another copy's): from here on revs_diff decides, not the
			// empty target's shortcut.
			s.firstPass.Store(true)
		}
		seq := last
		if len(seq) == 0 && len(rows) > 0 {
			seq = rows[len(rows)-1].Seq
		}
		short := len(rows) < r.opts.BatchSize
		if !short {
			s.caughtUp.Store(false)
		}
		if len(rows) > 0 || (len(seq) > 0 && string(seq) != string(since)) {
			if len(rows) > 0 {
				r.setState(StateActive, nil)
			}
			b := &batch{rows: rows, seq: seq, assume: s.emptyTarget && !s.firstPass.Load()}
			b.n = s.tracker.add(len(rows))
			b.refs.Store(1)
			r.mu.Lock()
			r.lastSeq = seq
			r.openDocsLocked(b, unread)
			r.mu.Unlock()
			select {
			case out <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
			since = seq
		}
		if short {
			s.caughtUp.Store(true)
			if !r.opts.Continuous {
				return nil
			}
			s.firstPass.Store(true)
			r.mu.Lock()
			if unread < 0 {
				r.remaining = 0
			}
			r.mu.Unlock()
			r.maybeIdle(s)
		}
		first, full = false, !short
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// diffRevs asks the target which revisions of a batch it lacks.
func (r *replication) diffRevs(ctx context.Context, s *session, in <-chan *batch, out chan<- *batch, ckpt chan<- struct{}) error {
	defer close(out)
	tgt := r.opts.Target
	for b := range in {
		order := make([]string, 0, len(b.rows))
		revs := make(map[string][]string, len(b.rows))
		var checked int64
		for _, c := range b.rows {
			if _, ok := revs[c.ID]; !ok {
				order = append(order, c.ID)
			}
			for _, cr := range c.Changes {
				revs[c.ID] = append(revs[c.ID], cr.Rev)
				checked++
			}
		}
		var found int64
		if b.assume {
			for _, c := range b.rows {
				if len(revs[c.ID]) != 1 {
					continue // an id listed twice in a batch is fetched as usual
				}
				if d := feedDoc(c); d != nil {
					b.ready = append(b.ready, d)
					revs[c.ID] = nil
					found++
				}
			}
			if len(b.rows) > 0 && 2*len(b.ready) < len(b.rows) {
				r.noFeedDocs.Store(true)
			}
			for _, id := range order {
				if revs[id] != nil {
					b.missing = append(b.missing, missingDoc{id: id, revs: revs[id]})
					found += int64(len(revs[id]))
				}
			}
		} else if len(order) > 0 {
			var diff map[string]couchdoc.RevsDiffResult
			err := r.retry(ctx, func() (err error) { diff, err = tgt.RevsDiff(ctx, revs); return err })
			if err != nil {
				return peerErr("target", tgt, "revs_diff", err)
			}
			for _, id := range order {
				d, ok := diff[id]
				if !ok || len(d.Missing) == 0 {
					continue
				}
				b.missing = append(b.missing, missingDoc{id: id, revs: sourceRevs(revs[id], d.Missing), ancestors: d.PossibleAncestors})
				found += int64(len(d.Missing))
			}
		}
		b.rows = nil
		r.addStats(Stats{MissingChecked: checked, MissingFound: found})
		r.diffed(b)
		if len(b.missing) == 0 && len(b.ready) == 0 {
			r.release(s, b, ckpt)
			continue
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// sourceRevs returns the revisions the target lacks as the source spells
// them. A target answers _revs_diff with each revision in its canonical
// form (couchdoc.CanonRev: CouchDB prints a 16-byte id, or upper-case hex,
// as lower-case hex), which a source that keeps ids as sent (PouchDB)
// would not find. A missing rev the source did not list is kept as is.
func sourceRevs(asked, missing []string) []string {
	var out []string
	for i, m := range missing {
		if slices.Contains(asked, m) {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(missing)), missing[:i]...)
		}
		spelled := m
		for _, a := range asked {
			if c, err := couchdoc.CanonRev(a); err == nil && c == m {
				spelled = a
				break
			}
		}
		out = append(out, spelled)
	}
	if out == nil {
		return missing
	}
	return out
}

// checkpointLoop records checkpoints while the pipeline runs: after each
// advance of the safe sequence, at most once per CheckpointInterval.
func (r *replication) checkpointLoop(ctx context.Context, s *session, ckpt <-chan struct{}, writerDone <-chan struct{}) error {
	last := time.Now() // the session start counts as a checkpoint
	var timer *time.Timer
	var timerC <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-writerDone:
			return nil
		case <-timerC:
			timerC = nil
		case <-ckpt:
			if wait := r.opts.CheckpointInterval - time.Since(last); wait > 0 {
				if timerC == nil {
					timer = time.NewTimer(wait)
					timerC = timer.C
				}
				continue
			}
		}
		if err := r.checkpoint(ctx, s); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		last = time.Now()
	}
}
