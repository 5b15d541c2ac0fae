package sync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/settee/settee/couchdoc"
)

// maxFailuresKept bounds Result.DocFailures.
const maxFailuresKept = 100

// replication runs one direction: sessions, each verifying the peers,
// resuming from the checkpoint and running the pipeline, until done,
// stopped, or failed for good.
type replication struct {
	opts  Options
	name  string
	repID string

	mu        gosync.Mutex
	state     State
	stats     Stats
	lastSeq   json.RawMessage
	ckptSeq   json.RawMessage
	lastErr   error
	failures  []DocFailure
	updated   time.Time
	sessionID string
	startSeq  json.RawMessage
	tracker   *seqTracker
	remaining int64               // changes not yet read, as the source counts them; -1 unknown
	inflight  int64               // documents read and not yet handled (see pendingLocked)
	batches   map[*batch]struct{} // batches read and not yet completed
	progress  bool                // the session transferred something
	sinceUsed bool                // opts.Since started a session already

	evMu       gosync.Mutex
	noBulkGet  atomic.Bool
	noFeedDocs atomic.Bool // the first-pass include_docs fast path is off
	retries    atomic.Int64
}

func newReplication(opts Options, name string) (*replication, error) {
	if opts.Source == nil || opts.Target == nil {
		return nil, ErrNoPeer
	}
	opts = opts.withDefaults()
	if err := checkLazy(opts); err != nil {
		return nil, err
	}
	return &replication{opts: opts, name: name, repID: ReplicationID(opts), state: StateStopped, remaining: -1}, nil
}

// run replicates until done (one-shot), ctx is cancelled, or a permanent
// error. A continuous replication survives transient errors: it goes
// offline and starts a new session after a backoff.
func (r *replication) run(ctx context.Context) (*Result, error) {
	res := &Result{ReplicationID: r.repID, StartTime: time.Now()}
	finish := func(st State, err error) (*Result, error) {
		r.setState(st, err)
		r.mu.Lock()
		res.Stats, res.LastSeq, res.SessionID, res.StartSeq = r.stats, r.ckptSeq, r.sessionID, r.startSeq
		res.DocFailures = append([]DocFailure(nil), r.failures...)
		res.Retries = r.retries.Load()
		r.mu.Unlock()
		res.EndTime = time.Now()
		return res, err
	}
	for attempt := 0; ; attempt++ {
		err := r.session(ctx)
		switch {
		case ctx.Err() != nil:
			return finish(StateStopped, ctx.Err())
		case err == nil:
			return finish(StateStopped, nil)
		case !r.opts.Continuous || !isTransient(err):
			return finish(failState(err), err)
		}
		r.mu.Lock()
		if r.progress {
			attempt = 0
		}
		r.mu.Unlock()
		r.setState(StateOffline, err)
		if sleep(ctx, backoff(attempt, r.opts.RetryDelay, r.opts.MaxRetryDelay)) != nil {
			return finish(StateStopped, ctx.Err())
		}
	}
}

// session is one pass of the protocol: verify peers, find the common
// checkpoint, run the pipeline, record a final checkpoint.
func (r *replication) session(ctx context.Context) error {
	r.setState(StateStarting, nil)
	src, tgt := r.opts.Source, r.opts.Target
	var srcInfo, tgtInfo *PeerInfo
	srcInfo, err := r.peerInfo(ctx, "source", src, r.opts.createSource)
	if err != nil {
		return err
	}
	if tgtInfo, err = r.peerInfo(ctx, "target", tgt, r.opts.CreateTarget); err != nil {
		return err
	}
	var srcLog, tgtLog *ReplicationLog
	if err := r.retry(ctx, func() (err error) { srcLog, err = readLog(ctx, src, r.repID); return err }); err != nil {
		return peerErr("source", src, "read checkpoint", err)
	}
	if err := r.retry(ctx, func() (err error) { tgtLog, err = readLog(ctx, tgt, r.repID); return err }); err != nil {
		return peerErr("target", tgt, "read checkpoint", err)
	}
	if hasUUID(src, tgt) && sharedIdentity(srcLog, tgtLog) {
		r.emit(Event{Kind: EventSharedIdentity, Err: ErrSharedIdentity})
	}
	if (srcLog == nil) != (tgtLog == nil) {
		if srcLog, tgtLog, err = r.recheckLogs(ctx, srcLog, tgtLog); err != nil {
			return err
		}
	}
	// A log still missing after recheckLogs is taken as gone, as CouchDB's
	// replicator does: a full replication, which revs_diff keeps from
	// writing anything twice. Resuming from the lone local log instead would
	// skip what a database deleted and created again holds below its
	// sequence (reliability/faults TestServerRestartLosesData).
	startSeq, history := compareLogs(srcLog, tgtLog)
	if srcLog == nil && tgtLog == nil {
		if startSeq, history, err = r.seedStart(ctx); err != nil {
			return err
		}
	}
	if len(r.opts.Since) > 0 && !r.sinceUsed {
		// Only the first session: one back from offline resumes from
		// the checkpoints it wrote.
		startSeq = nonNull(r.opts.Since)
		r.sinceUsed = true
	}
	s := &session{
		emptyTarget: !r.opts.noEmptyTargetShortcut && startSeq == nil && tgtLog == nil &&
			tgtInfo.DocCount == 0 && tgtInfo.DocDelCount == 0,
		startSeq: startSeq,
		cp: &checkpointer{r: r, repID: r.repID, sessionID: newSessionID(), startTime: time.Now().UTC(),
			startSeq: startSeq, history: history, recorded: startSeq},
	}
	if srcLog != nil {
		s.cp.srcRev = srcLog.Rev
	}
	if tgtLog != nil {
		s.cp.tgtRev = tgtLog.Rev
	}
	s.tracker = newSeqTracker(startSeq)
	r.mu.Lock()
	r.sessionID, r.startSeq, r.tracker, r.progress = s.cp.sessionID, startSeq, s.tracker, false
	r.lastSeq, r.ckptSeq = startSeq, startSeq
	r.inflight, r.batches = 0, map[*batch]struct{}{}
	r.mu.Unlock()
	unread := r.countUnread(ctx, startSeq)
	if unread < 0 && startSeq == nil {
		unread = srcInfo.DocCount + srcInfo.DocDelCount // an estimate
	}
	r.mu.Lock()
	r.remaining = unread
	r.mu.Unlock()
	r.setState(StateActive, nil)

	perr := r.pipeline(ctx, s)

	// Record what is safely written, even when cancelled or failed: a
	// short fresh context, since ctx may be done.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	cerr := r.checkpoint(fctx, s)
	if perr != nil {
		return perr
	}
	return cerr
}

// peerInfo checks a peer (role "source" or "target"), creating it when
// missing and create is set. Creating a database another replication has
// just created is fine.
func (r *replication) peerInfo(ctx context.Context, role string, p Peer, create bool) (*PeerInfo, error) {
	var info *PeerInfo
	err := r.retry(ctx, func() (err error) { info, err = p.Info(ctx); return err })
	if errors.Is(err, couchdoc.ErrNotFound) && create {
		c, ok := p.(Creator)
		if !ok {
			return nil, peerErr(role, p, "create", errors.New("the peer cannot create databases"))
		}
		err = r.retry(ctx, func() error { return c.Create(ctx) })
		if err != nil && !errors.Is(err, couchdoc.ErrFileExists) {
			return nil, peerErr(role, p, "create", err)
		}
		err = r.retry(ctx, func() (err error) { info, err = p.Info(ctx); return err })
	}
	if err != nil {
		return nil, peerErr(role, p, "check", err)
	}
	return info, nil
}

// checkpoint records the safe sequence on both peers if it moved, after
// making the target's writes durable.
func (r *replication) checkpoint(ctx context.Context, s *session) error {
	seq := s.tracker.safeSeq()
	if seq == nil || string(seq) == string(s.cp.recorded) {
		return nil
	}
	if s.written.Swap(false) {
		err := r.retry(ctx, func() error { return r.opts.Target.EnsureFullCommit(ctx) })
		if err != nil {
			s.written.Store(true)
			return peerErr("target", r.opts.Target, "ensure full commit", err)
		}
	}
	st := r.snapshotStats()
	if err := r.retry(ctx, func() error { return s.cp.write(ctx, seq, st) }); err != nil {
		return err
	}
	r.mu.Lock()
	r.ckptSeq = seq
	r.mu.Unlock()
	r.emit(Event{Kind: EventProgress})
	return nil
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *replication) snapshotStats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *replication) addStats(st Stats) {
	r.mu.Lock()
	r.stats.Add(st)
	if st.DocsWritten > 0 || st.DocWriteFailures > 0 {
		r.progress = true
	}
	r.mu.Unlock()
}

// noteError remembers a recovered or fatal error for Status.
func (r *replication) noteError(err error) {
	r.mu.Lock()
	r.lastErr = err
	r.mu.Unlock()
}

// docEvents reports whether EventDocs are wanted.
func (r *replication) docEvents() bool {
	return r.opts.OnEvent != nil && (r.opts.DocumentEvents || r.opts.docsWanted != nil && r.opts.docsWanted())
}

// docsDone sends an EventDocs for docs, when wanted and not empty.
func (r *replication) docsDone(docs []DocEvent) {
	if len(docs) > 0 && r.docEvents() {
		r.emit(Event{Kind: EventDocs, Docs: docs})
	}
}

func (r *replication) docFailure(f DocFailure) {
	r.mu.Lock()
	if len(r.failures) < maxFailuresKept {
		r.failures = append(r.failures, f)
	}
	r.mu.Unlock()
	r.emit(Event{Kind: EventDocFailure, Doc: &f, Err: f.Err})
}

func (r *replication) setState(st State, err error) {
	r.mu.Lock()
	if err != nil {
		r.lastErr = err
	}
	if r.state == st && err == nil {
		r.mu.Unlock()
		return
	}
	r.state = st
	r.updated = time.Now()
	r.mu.Unlock()
	r.emit(Event{Kind: EventState, Err: err})
}

// status snapshots the replication.
func (r *replication) status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Status{
		Replication: r.name, ReplicationID: r.repID, State: r.state, Stats: r.stats,
		LastSeq: r.lastSeq, CheckpointedSeq: r.ckptSeq, Pending: r.pendingLocked(),
		LastError: r.lastErr, Updated: r.updated,
	}
}

func (r *replication) pendingLocked() int64 {
	if r.tracker == nil {
		return -1 // no session yet: nothing counted
	}
	if r.remaining < 0 {
		if r.state == StateIdle || r.state == StateStopped {
			return r.inflight
		}
		return -1
	}
	return r.remaining + r.inflight
}

// emit fills an event with the current status and delivers it, one event
// at a time.
func (r *replication) emit(ev Event) {
	if r.opts.OnEvent == nil {
		return
	}
	ev.Status, ev.Time = r.status(), time.Now()
	r.evMu.Lock()
	defer r.evMu.Unlock()
	r.opts.OnEvent(ev)
}
