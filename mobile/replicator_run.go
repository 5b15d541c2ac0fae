package mobile

import (
	gosync "sync"
	"time"

	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// Replicator replicates between a Database and a remote CouchDB database.
// Its methods are safe to call from any thread.
//
// Two goroutines run while it is started: a supervisor that starts and
// stops replication sessions (package sync) as Start, Stop and
// SetNetworkAvailable ask, and a dispatcher that calls the app's
// ReplicatorListener, so that a listener may call Stop without deadlock.
type Replicator struct {
	db     *Database
	cfg    ReplicatorConfig
	opts   sync.Options
	remote *couch.DB
	local  *localpeer.Peer

	mu          gosync.Mutex
	listener    ReplicatorListener
	resolver    ConflictResolver
	want        bool // started and not stopped or finished
	online      bool
	sess        *sync.Replicator
	base        sync.Stats // counters of the sessions that ended
	state       string     // the state while no session runs
	lastErr     string
	lastSeq     string
	ended       [3]int64 // pending, push and pull pending when the last session ended
	updated     time.Time
	running     bool          // the supervisor is alive
	supDone     chan struct{} // closed when the supervisor exits
	wake        chan struct{} // nudges the supervisor
	resolveReq  bool          // a pull caught up: resolve conflicts
	dispatching bool          // the dispatcher is alive
	qWake       chan struct{}
	qStatus     bool
	qErrs       []docError
}

type docError struct{ id, rev, msg string }

// maxQueuedDocErrors bounds the document errors waiting for a slow
// listener; more are only logged.
const maxQueuedDocErrors = 1000

// SetListener sets (or, with nil, removes) the listener of status changes
// and document errors.
func (r *Replicator) SetListener(l ReplicatorListener) {
	defer recoverLog("SetListener")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listener = l
}

// SetConflictResolver sets a resolver applied to the Database's conflicts
// each time a pull completes (one-shot) or catches up (continuous); nil
// turns it off.
func (r *Replicator) SetConflictResolver(res ConflictResolver) {
	defer recoverLog("SetConflictResolver")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolver = res
}

// Start starts replicating in the background and returns at once; follow
// it with a ReplicatorListener or Status. Starting a running replicator is
// a no-op; a finished or stopped one starts again from its checkpoints.
func (r *Replicator) Start() (err error) {
	defer recoverTo(&err)
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	if r.db.closed {
		return errClosed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.want {
		return nil
	}
	r.want, r.lastErr = true, ""
	r.setStateLocked(string(sync.StateStarting))
	if !r.running {
		r.db.replicators[r] = struct{}{} // Close stops it
		r.running, r.supDone = true, make(chan struct{})
		r.db.wg.Add(1)
		go r.supervise(r.supDone)
	}
	if !r.dispatching {
		r.dispatching, r.qWake = true, make(chan struct{}, 1)
		r.db.wg.Add(1)
		go r.dispatch(r.qWake)
	}
	r.nudge()
	r.queueStatusLocked()
	return nil
}

// Stop stops the replicator and returns once it has recorded its
// checkpoint. Stopping a stopped replicator is a no-op. It may be called
// from a ReplicatorListener, not from a ConflictResolver.
func (r *Replicator) Stop() (err error) {
	defer recoverTo(&err)
	r.stop()
	return nil
}

func (r *Replicator) stop() {
	r.mu.Lock()
	r.want = false
	done := r.supDone
	running := r.running
	r.nudge()
	r.mu.Unlock()
	if running {
		<-done
	}
}

// SetNetworkAvailable tells the replicator whether the device is online.
// Offline, a running replicator stops its session (state "offline") instead
// of retrying in vain; back online, it resumes from its checkpoint.
func (r *Replicator) SetNetworkAvailable(available bool) {
	defer recoverLog("SetNetworkAvailable")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.online == available {
		return
	}
	r.online = available
	logf(LevelInfo, "replicator %s: network available: %v", r.remote, available)
	r.nudge()
	r.queueStatusLocked()
}

// Status returns a snapshot of the replicator.
func (r *Replicator) Status() *ReplicatorStatus {
	defer recoverLog("Status")
	r.mu.Lock()
	sess := r.sess
	s := &ReplicatorStatus{State: r.state, LastError: r.lastErr, LastSeq: r.lastSeq, Pending: r.ended[0], PushPending: r.ended[1], PullPending: r.ended[2], UpdatedMillis: r.updated.UnixMilli()}
	stats, updated := r.base, r.updated
	if r.want && !r.online {
		s.State = string(sync.StateOffline)
	}
	r.mu.Unlock()
	if sess != nil {
		st := sess.Status()
		s.State = string(st.State)
		if st.State == sync.StateStopped {
			// The session ended; the supervisor is finishing it (conflict
			// resolution) and will report the final state.
			s.State = string(sync.StateActive)
		}
		addStats(&stats, st.Stats)
		s.Pending = st.Pending
		s.PushPending, s.PullPending = r.directionPending(st)
		if st.LastError != nil && s.LastError == "" {
			s.LastError = st.LastError.Error()
		}
		if seq := sourceSeq(st); seq != "" {
			s.LastSeq = seq
		}
		if st.Updated.After(updated) {
			s.UpdatedMillis = st.Updated.UnixMilli()
		}
	}
	s.DocsRead, s.DocsWritten, s.DocWriteFailures = stats.DocsRead, stats.DocsWritten, stats.DocWriteFailures
	s.MissingChecked, s.MissingFound = stats.MissingChecked, stats.MissingFound
	return s
}

// sourceSeq is the checkpointed sequence of the pull (or of the only
// direction).
func sourceSeq(st sync.Status) string {
	for _, d := range st.Directions {
		if d.Replication == "pull" {
			return string(d.CheckpointedSeq)
		}
	}
	return string(st.CheckpointedSeq)
}

func addStats(s *sync.Stats, o sync.Stats) {
	s.DocsRead += o.DocsRead
	s.DocsWritten += o.DocsWritten
	s.MissingChecked += o.MissingChecked
	s.MissingFound += o.MissingFound
	s.DocWriteFailures += o.DocWriteFailures
}

// nudge wakes the supervisor; r.mu is held.
func (r *Replicator) nudge() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Replicator) setStateLocked(state string) {
	r.state, r.updated = state, time.Now()
}

// supervise runs sessions until the replicator is stopped or finished, or
// the Database closes.
func (r *Replicator) supervise(done chan struct{}) {
	defer r.db.wg.Done()
	defer close(done)
	defer recoverLog("replicator supervisor")
	for {
		r.mu.Lock()
		if r.db.ctx.Err() != nil {
			r.want = false
		}
		want, online, sess := r.want, r.online, r.sess
		if !want && sess == nil {
			r.running = false
			r.queueStatusLocked()
			r.mu.Unlock()
			r.unregister()
			r.db.maybeAutoCompact()
			return
		}
		r.mu.Unlock()
		switch {
		case sess != nil && (!want || !online):
			err := sess.Stop()
			r.endSession(sess, err, true)
			continue
		case sess == nil && online:
			r.startSession()
			continue
		}
		var sessDone <-chan struct{}
		if sess != nil {
			sessDone = sess.Done()
		}
		select {
		case <-r.wake:
		case <-r.db.ctx.Done():
		case <-sessDone:
			r.endSession(sess, sess.Wait(), false)
		}
		r.mu.Lock()
		resolve := r.resolveReq && r.sess != nil
		r.resolveReq = false
		r.mu.Unlock()
		if resolve {
			r.resolveConflicts()
		}
	}
}

// unregister removes a replicator that stopped from its Database's set
// (unless it was started again meanwhile).
func (r *Replicator) unregister() {
	r.db.mu.Lock()
	defer r.db.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		delete(r.db.replicators, r)
	}
}

// startSession starts one replication session.
func (r *Replicator) startSession() {
	var (
		s   *sync.Replicator
		err error
	)
	switch r.cfg.Direction {
	case "push":
		o := r.opts
		o.Source, o.Target = r.local, r.remote
		s, err = sync.New(o)
	case "pull":
		o := r.opts
		o.Source, o.Target = r.remote, r.local
		s, err = sync.New(o)
	default:
		s, err = sync.NewSync(r.local, r.remote, r.opts)
	}
	if err == nil {
		err = s.Start(r.db.ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.want, r.lastErr = false, err.Error()
		r.setStateLocked(string(sync.StateError))
		logf(LevelError, "replicator %s: %v", r.remote, err)
	} else {
		r.sess = s
	}
	r.queueStatusLocked()
}

// endSession records the end of a session: stopped by the supervisor
// (Stop, offline, Close), or ended by itself (one-shot done, or failed).
func (r *Replicator) endSession(sess *sync.Replicator, err error, stoppedByUs bool) {
	st := sess.Status()
	if err == nil && !stoppedByUs && r.pulls() {
		r.mu.Lock()
		res := r.resolver
		r.mu.Unlock()
		if res != nil {
			r.resolveConflicts()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sess = nil
	addStats(&r.base, st.Stats)
	r.ended[0] = st.Pending
	r.ended[1], r.ended[2] = r.directionPending(st)
	if seq := sourceSeq(st); seq != "" {
		r.lastSeq = seq
	}
	switch {
	case err != nil:
		r.want, r.lastErr = false, err.Error()
		r.setStateLocked(string(sync.StateError))
		logf(LevelError, "replicator %s: %v", r.remote, err)
	case stoppedByUs && r.want:
		r.setStateLocked(string(sync.StateOffline)) // SetNetworkAvailable(false)
	default:
		r.want = false
		r.setStateLocked(string(sync.StateStopped))
	}
	r.queueStatusLocked()
}

func (r *Replicator) pulls() bool { return r.cfg.Direction != "push" }

// resolveConflicts applies the replicator's ConflictResolver, if any.
func (r *Replicator) resolveConflicts() {
	r.mu.Lock()
	res := r.resolver
	r.mu.Unlock()
	if res == nil {
		return
	}
	n, err := r.db.ResolveConflicts(res)
	if n > 0 {
		logf(LevelInfo, "replicator %s: resolved %d conflicted documents", r.remote, n)
	}
	if err != nil && err != errClosed {
		logf(LevelWarn, "replicator %s: conflict resolution: %v", r.remote, err)
	}
}

// onEvent receives the session's events (from its goroutines).
func (r *Replicator) onEvent(ev sync.Event) {
	defer recoverLog("replicator event")
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Kind {
	case sync.EventSharedIdentity:
		logf(LevelWarn, "replicator %s: %s: %v", r.remote, ev.Replication, ev.Err)
	case sync.EventDocFailure:
		if ev.Doc == nil {
			return
		}
		msg := "unknown error"
		if ev.Doc.Err != nil {
			msg = ev.Doc.Err.Error()
		}
		logf(LevelWarn, "replicator %s: document %q rev %s: %s", r.remote, ev.Doc.ID, ev.Doc.Rev, msg)
		if len(r.qErrs) < maxQueuedDocErrors {
			r.qErrs = append(r.qErrs, docError{ev.Doc.ID, ev.Doc.Rev, msg})
		}
	case sync.EventState:
		if ev.Err != nil {
			logf(LevelInfo, "replicator %s: %s %s: %v", r.remote, ev.Replication, ev.State, ev.Err)
		} else {
			logf(LevelInfo, "replicator %s: %s %s", r.remote, ev.Replication, ev.State)
		}
		if ev.State == sync.StateIdle && (ev.Replication == "pull" || r.cfg.Direction == "pull") && r.resolver != nil {
			r.resolveReq = true
			r.nudge()
		}
	}
	r.queueStatusLocked()
}

// queueStatusLocked asks the dispatcher to send the current status.
func (r *Replicator) queueStatusLocked() {
	r.qStatus = true
	if r.qWake != nil {
		select {
		case r.qWake <- struct{}{}:
		default:
		}
	}
}

// dispatch calls the app's listener with queued status updates and
// document errors until the supervisor has exited and the queue is empty.
func (r *Replicator) dispatch(wake chan struct{}) {
	defer r.db.wg.Done()
	var last ReplicatorStatus // the last status sent: repeats are not sent
	for {
		r.mu.Lock()
		status, errs, l := r.qStatus, r.qErrs, r.listener
		r.qStatus, r.qErrs = false, nil
		if !status && len(errs) == 0 {
			if !r.running {
				r.dispatching = false
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
			<-wake
			continue
		}
		r.mu.Unlock()
		if l == nil {
			continue
		}
		for _, e := range errs {
			callDocError(l, e)
		}
		if status {
			if st := r.Status(); *st != last {
				last = *st
				callStatus(l, st)
			}
		}
	}
}

func callDocError(l ReplicatorListener, e docError) {
	defer recoverLog("ReplicatorListener.OnDocumentError")
	l.OnDocumentError(e.id, e.rev, e.msg)
}

func callStatus(l ReplicatorListener, s *ReplicatorStatus) {
	defer recoverLog("ReplicatorListener.OnStatus")
	l.OnStatus(s)
}
