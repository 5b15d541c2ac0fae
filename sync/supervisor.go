package sync

import (
	"context"
	gosync "sync"
	"sync/atomic"
)

// Direction says which way a Supervisor replicates.
type Direction string

// Directions of a Supervisor.
const (
	// Push replicates the local peer to the remote.
	Push Direction = "push"
	// Pull replicates the remote peer to the local.
	Pull Direction = "pull"
	// Both runs a push and a pull together, as Sync does.
	Both Direction = "both"
)

// SupervisorConfig describes the replication a Supervisor keeps running.
type SupervisorConfig struct {
	// Local and Remote are the two peers, both required.
	Local, Remote Peer
	// Direction is Push, Pull or Both ("" means Both).
	Direction Direction
	// Options configure each session. Source and Target are ignored (they
	// follow from Local, Remote and Direction; Both applies Sync's rules).
	// OnEvent receives the supervisor's events, as Supervisor says.
	Options Options
	// CaughtUp, when set, is called on the supervisor's goroutine each time
	// the pull (of Pull or Both) has caught up: when a one-shot session
	// completed, before its final state is reported, and each time a
	// continuous pull goes idle. It runs while the session goes on (a
	// continuous one) and may write to the local peer: the mobile layer
	// resolves conflicts there. ctx is the one given to Start.
	CaughtUp func(ctx context.Context)
}

// Supervisor keeps a replication between a local and a remote peer going
// as its owner asks, across sessions: Start, Stop and SetOnline (the
// device's network). A session is a Replicator (New, or NewSync for
// Both): a continuous one survives transient failures by itself (state
// StateOffline, then a new session from the checkpoint after a backoff of
// Options.RetryDelay doubling up to MaxRetryDelay); a permanent failure ends
// it in StateError, and the supervisor waits to be started again; a 401 or
// 403 ends it in StateUnauthorized, where a supervisor whose remote is a
// Reauthorizer waits for new credentials and resumes by itself. Offline
// (SetOnline(false)) the session is stopped, its checkpoint recorded, and
// a new one starts from that checkpoint when back online. Stats add up
// over the supervisor's sessions.
//
// Events: Options.OnEvent is called from a goroutine the supervisor owns,
// one event at a time and never while it holds a lock, so it may block
// and may call Start, Stop, SetOnline and Status (not Wait). Each event
// carries its direction's Status with the supervisor's totals. State
// changes and document failures are delivered in order (doc failures
// beyond a thousand waiting ones are dropped; Stats counts them); progress
// is coalesced: a slow OnEvent sees the latest progress of a direction,
// not every step, and never the same progress twice in a row. A session's
// end is reported once, by the supervisor: StateStopped (finished,
// stopped), StateOffline (SetOnline(false)), StateError or
// StateUnauthorized (with Err).
//
// Its methods are safe for concurrent use.
type Supervisor struct {
	cfg SupervisorConfig

	mu       gosync.Mutex
	idle     *gosync.Cond // broadcast when the loop or the dispatcher exits
	want     bool         // started, and not stopped, finished or failed
	online   bool
	looping  bool          // the loop goroutine is alive
	loopDone chan struct{} // closed when it exits
	wake     chan struct{} // nudges the loop
	sess     *Replicator   // the running session
	state    State         // the state while no session runs
	final    Status        // the last session's status, its Stats in base
	base     map[string]Stats
	err      error // why the last session failed
	results  []*Result
	caughtUp bool            // the pull went idle: call CaughtUp
	offline  map[string]bool // directions offline until they recover

	// unauth: the last session was refused the credentials and the
	// supervisor waits for new ones (a goroutine in WaitCredentials,
	// cancelled by credsCancel, sends to credsDone).
	unauth      bool
	credsDone   chan error
	credsCancel context.CancelFunc
	credsWG     gosync.WaitGroup

	progress progress // Status's Completed and Total (supervisor_progress.go)

	listeners    []*listener  // AddListener's, replaced on change (supervisor_listeners.go)
	docListeners atomic.Int32 // of them, those that want EventDocs

	dispatching bool // the dispatcher goroutine is alive
	qWake       chan struct{}
	queue       []Event
	lastSent    map[string]Status // per direction
}

// maxQueuedEvents bounds the events waiting for a slow OnEvent.
const maxQueuedEvents = 1000

// NewSupervisor returns a stopped supervisor. It does no I/O: it checks
// cfg as New and NewSync do (ErrNoPeer, ErrNoDirection, lazy attachment
// rules) and keeps a copy.
func NewSupervisor(cfg SupervisorConfig) (*Supervisor, error) {
	if cfg.Direction == "" {
		cfg.Direction = Both
	}
	s := &Supervisor{cfg: cfg, online: true, state: StateStopped, base: map[string]Stats{}, offline: map[string]bool{},
		wake: make(chan struct{}, 1), qWake: make(chan struct{}, 1), lastSent: map[string]Status{}}
	s.idle = gosync.NewCond(&s.mu)
	if _, err := s.newSession(false); err != nil {
		return nil, err
	}
	s.final = Status{Replication: s.name(), State: StateStopped, Pending: -1}
	return s, nil
}

// name is the supervisor's Status.Replication.
func (s *Supervisor) name() string {
	if s.cfg.Direction == Both {
		return "sync"
	}
	return string(s.cfg.Direction)
}

// newSession returns a session, not started; with events, they go to the
// supervisor.
func (s *Supervisor) newSession(events bool) (*Replicator, error) {
	o := s.cfg.Options
	o.OnEvent = nil
	if events {
		o.OnEvent = s.onSessionEvent
		o.docsWanted = s.wantsDocs
	}
	switch s.cfg.Direction {
	case Push:
		o.Source, o.Target = s.cfg.Local, s.cfg.Remote
		return newNamed(o, "push")
	case Pull:
		o.Source, o.Target = s.cfg.Remote, s.cfg.Local
		return newNamed(o, "pull")
	case Both:
		return NewSync(s.cfg.Local, s.cfg.Remote, o)
	}
	return nil, ErrNoDirection
}

// Start starts replicating in the background and returns at once. ctx
// bounds the supervisor's life: once it is done, the session stops (with
// its checkpoint) and the supervisor ends as by Stop. Starting a started
// supervisor is a no-op; a finished, stopped or failed one starts again
// from its checkpoints.
func (s *Supervisor) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.want {
		return nil
	}
	s.want, s.err, s.state, s.unauth = true, nil, StateStarting, false
	if !s.looping {
		s.looping, s.loopDone = true, make(chan struct{})
		go s.loop(ctx, s.loopDone)
	}
	s.nudgeLocked()
	return nil
}

// Stop stops the session, if any, and returns once its checkpoint is
// recorded and the supervisor is stopped: with the error that ended the
// last session, nil when it was running fine. Events already queued may
// still be delivered after it returns (Wait waits for them). Stopping a
// stopped supervisor is a no-op.
func (s *Supervisor) Stop() error {
	s.mu.Lock()
	s.want = false
	done, looping := s.loopDone, s.looping
	s.nudgeLocked()
	s.mu.Unlock()
	if looping {
		<-done
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Wait blocks until the supervisor has ended (stopped, finished one-shot,
// failed, or its context done) and every queued event was delivered, and
// returns the error that ended the last session (nil when it completed or
// was stopped). A supervisor that waits offline, or unauthorized for new
// credentials, does not end by itself.
// Do not call it from OnEvent.
func (s *Supervisor) Wait() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.looping || s.dispatching {
		s.idle.Wait()
	}
	return s.err
}

// SetOnline tells the supervisor whether the network is there (it starts
// online). Offline, a running session is stopped and the state is
// StateOffline instead of a session retrying in vain; back online, a new
// session resumes from the checkpoint.
func (s *Supervisor) SetOnline(online bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.online == online {
		return
	}
	s.online = online
	s.nudgeLocked()
}

// Started reports whether the supervisor is started: replicating, or
// waiting offline or unauthorized for new credentials; not stopped,
// finished or failed for good.
func (s *Supervisor) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.want
}

// Results returns the results of the last session that ended (push then
// pull for Both), nil before one ended.
func (s *Supervisor) Results() []*Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Result(nil), s.results...)
}

// PendingDocIDs is Replicator.PendingDocIDs for the running session, or,
// when none runs, for a session that is not started (so it answers
// offline from the local checkpoint for Push and Both).
func (s *Supervisor) PendingDocIDs(ctx context.Context) ([]string, error) {
	r, err := s.handle()
	if err != nil {
		return nil, err
	}
	return r.PendingDocIDs(ctx)
}

// IsDocumentPending reports whether PendingDocIDs would list id, reading
// only that document's change.
func (s *Supervisor) IsDocumentPending(ctx context.Context, id string) (bool, error) {
	r, err := s.handle()
	if err != nil {
		return false, err
	}
	return r.IsDocumentPending(ctx, id)
}

func (s *Supervisor) handle() (*Replicator, error) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	return s.newSession(false)
}

// nudgeLocked wakes the loop.
func (s *Supervisor) nudgeLocked() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
