package mobile

import (
	"context"
	gosync "sync"

	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

// Replicator replicates between a Database and a remote CouchDB database.
// Its methods are safe to call from any thread.
//
// It is a sync.Supervisor (sessions, offline and back, checkpoints,
// coalesced events) seen through bindable types: the supervisor's event
// goroutine calls the app's ReplicatorListener, so that a listener may
// call Stop without deadlock, and its loop calls the ConflictResolver.
type Replicator struct {
	db     *Database
	cfg    ReplicatorConfig
	remote *couch.DB
	sup    *sync.Supervisor

	mu       gosync.Mutex
	listener ReplicatorListener
	resolver ConflictResolver
	last     ReplicatorStatus // the last status sent: repeats are not sent
}

// SetListener sets (or, with nil, removes) the one listener of status
// changes and document errors; AddChangeListener and AddDocumentListener
// add others beside it.
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
	r.db.replicators[r] = struct{}{} // Close stops it
	return r.sup.Start(r.db.ctx)
}

// Stop stops the replicator and returns once it has recorded its
// checkpoint. Stopping a stopped replicator is a no-op. It may be called
// from a ReplicatorListener, not from a ConflictResolver.
func (r *Replicator) Stop() (err error) {
	defer recoverTo(&err)
	_ = r.sup.Stop() // why it failed, if it did, is in Status().LastError
	return nil
}

// SetNetworkAvailable tells the replicator whether the device is online.
// Offline, a running replicator stops its session (state "offline") instead
// of retrying in vain; back online, it resumes from its checkpoint.
func (r *Replicator) SetNetworkAvailable(available bool) {
	defer recoverLog("SetNetworkAvailable")
	logf(LevelInfo, "replicator %s: network available: %v", r.remote, available)
	r.sup.SetOnline(available)
}

// Status returns a snapshot of the replicator.
func (r *Replicator) Status() *ReplicatorStatus {
	defer recoverLog("Status")
	st := r.sup.Status()
	s := &ReplicatorStatus{State: string(st.State), Pending: st.Pending, UpdatedMillis: st.Updated.UnixMilli(),
		DocsRead: st.Stats.DocsRead, DocsWritten: st.Stats.DocsWritten, DocWriteFailures: st.Stats.DocWriteFailures,
		MissingChecked: st.Stats.MissingChecked, MissingFound: st.Stats.MissingFound, LastSeq: sourceSeq(st),
		Completed: st.Completed, Total: st.Total}
	s.PushPending, s.PullPending = r.directionPending(st)
	if st.LastError != nil {
		s.LastError = st.LastError.Error()
	}
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

// resolveConflicts applies the replicator's ConflictResolver, if any: the
// supervisor's CaughtUp.
func (r *Replicator) resolveConflicts(context.Context) {
	defer recoverLog("conflict resolution")
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

// onEvent logs the supervisor's events and tells the listener, on the
// supervisor's event goroutine.
func (r *Replicator) onEvent(ev sync.Event) {
	defer recoverLog("replicator event")
	r.mu.Lock()
	l := r.listener
	r.mu.Unlock()
	switch ev.Kind {
	case sync.EventSharedIdentity:
		logf(LevelWarn, "replicator %s: %s: %v", r.remote, ev.Replication, ev.Err)
	case sync.EventDocFailure:
		msg := "unknown error"
		if ev.Err != nil {
			msg = ev.Err.Error()
		}
		var id, rev string
		if ev.Doc != nil {
			id, rev = ev.Doc.ID, ev.Doc.Rev
		}
		logf(LevelWarn, "replicator %s: document %q rev %s: %s", r.remote, id, rev, msg)
		if l != nil {
			callDocError(l, id, rev, msg)
		}
	case sync.EventState:
		if ev.Err != nil {
			logf(LevelInfo, "replicator %s: %s %s: %v", r.remote, ev.Replication, ev.State, ev.Err)
		} else {
			logf(LevelInfo, "replicator %s: %s %s", r.remote, ev.Replication, ev.State)
		}
	}
	st := r.Status()
	r.mu.Lock()
	changed := *st != r.last
	r.last = *st
	r.mu.Unlock()
	if l != nil && changed {
		callStatus(l, st)
	}
	if !r.sup.Started() {
		r.db.replicatorEnded(r)
	}
}

func callDocError(l ReplicatorListener, id, rev, msg string) {
	defer recoverLog("ReplicatorListener.OnDocumentError")
	l.OnDocumentError(id, rev, msg)
}

func callStatus(l ReplicatorListener, s *ReplicatorStatus) {
	defer recoverLog("ReplicatorListener.OnStatus")
	l.OnStatus(s)
}

// running reports whether the replicator is started (replicating, or
// waiting offline or for a new token).
func (r *Replicator) running() bool {
	return r.sup.Started()
}

// replicatorEnded forgets a replicator that stopped (unless it was started
// again meanwhile) and lets auto-compaction run.
func (d *Database) replicatorEnded(r *Replicator) {
	d.mu.Lock()
	if !r.running() {
		delete(d.replicators, r)
	}
	d.mu.Unlock()
	d.maybeAutoCompact()
}
