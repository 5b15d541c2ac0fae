package sync

import (
	"context"
	gosync "sync"

	"golang.org/x/sync/errgroup"
)

// Replicate runs one replication from opts.Source to opts.Target and
// returns when it is done (one-shot), or when ctx is cancelled (then with
// ctx's error and the last checkpoint recorded), or on a permanent error.
func Replicate(ctx context.Context, opts Options) (*Result, error) {
	r, err := newReplication(opts, "")
	if err != nil {
		return nil, err
	}
	return r.run(ctx)
}

// SyncResult is the outcome of Sync, per direction.
type SyncResult struct {
	Push *Result
	Pull *Result
}

// Sync replicates both ways between a local and a remote peer: push (local
// to remote) and pull (remote to local) run together. opts.Source and
// opts.Target are ignored. DocIDs and Selector apply to both directions;
// Filter, QueryParams and Since only to the pull (the remote runs the
// filter; Since is a remote sequence). CreateTarget creates the remote
// when it is missing. The first permanent error stops both directions.
func Sync(ctx context.Context, local, remote Peer, opts Options) (*SyncResult, error) {
	r, err := NewSync(local, remote, opts)
	if err != nil {
		return nil, err
	}
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	err = r.Wait()
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	res := r.Results()
	return &SyncResult{Push: res[0], Pull: res[1]}, err
}

// Replicator is a handle on a running replication (one direction, or both
// for a sync), for callers that start it and look at it later: the CLI and
// the mobile layer.
type Replicator struct {
	reps []*replication
	name string

	mu      gosync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
	results []*Result
	err     error
}

// New returns a Replicator for one direction. It does no I/O.
func New(opts Options) (*Replicator, error) { return newNamed(opts, "") }

// newNamed returns a Replicator for one direction whose status and
// events are named name ("push", "pull" or "").
func newNamed(opts Options, name string) (*Replicator, error) {
	r, err := newReplication(opts, name)
	if err != nil {
		return nil, err
	}
	return &Replicator{reps: []*replication{r}, done: make(chan struct{})}, nil
}

// NewSync returns a Replicator for both directions between local and
// remote, with Sync's rules for opts. It does no I/O.
func NewSync(local, remote Peer, opts Options) (*Replicator, error) {
	if local == nil || remote == nil {
		return nil, ErrNoPeer
	}
	push, pull := opts, opts
	push.Source, push.Target = local, remote
	push.Filter, push.QueryParams, push.Since = "", nil, nil
	push.Attachments = Eager
	pull.Source, pull.Target = remote, local
	// The remote may not exist before the push creates it: the pull,
	// running alongside, creates it too rather than fail.
	pull.createSource, pull.CreateTarget = opts.CreateTarget, false
	pr, err := newReplication(push, "push")
	if err != nil {
		return nil, err
	}
	pl, err := newReplication(pull, "pull")
	if err != nil {
		return nil, err
	}
	return &Replicator{reps: []*replication{pr, pl}, name: "sync", done: make(chan struct{})}, nil
}

// Start runs the replication in the background until it is done, ctx is
// cancelled or Stop is called. A Replicator runs once.
func (r *Replicator) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return ErrStarted
	}
	r.started = true
	ctx, r.cancel = context.WithCancel(ctx)
	for _, rep := range r.reps {
		rep.setState(StateStarting, nil)
	}
	go r.run(ctx)
	return nil
}

func (r *Replicator) run(ctx context.Context) {
	defer close(r.done)
	defer r.cancel()
	results := make([]*Result, len(r.reps))
	g, gctx := errgroup.WithContext(ctx)
	for i, rep := range r.reps {
		g.Go(func() error {
			res, err := rep.run(gctx)
			results[i] = res
			if err != nil && gctx.Err() != nil && ctx.Err() != nil {
				return nil // stopped, not failed
			}
			return err
		})
	}
	err := g.Wait()
	r.mu.Lock()
	r.results, r.err = results, err
	r.mu.Unlock()
}

// Stop cancels the replication, waits until it has recorded its final
// checkpoint, and returns its error (nil when it was running fine).
func (r *Replicator) Stop() error {
	r.mu.Lock()
	if !r.started {
		r.mu.Unlock()
		return nil
	}
	cancel := r.cancel
	r.mu.Unlock()
	cancel()
	return r.Wait()
}

// Wait blocks until the replication ends and returns its error: nil when a
// one-shot replication completed or the replication was stopped.
func (r *Replicator) Wait() error {
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if !started {
		return nil
	}
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Done is closed when the replication has ended.
func (r *Replicator) Done() <-chan struct{} { return r.done }

// Results returns the result of each direction (push then pull for a
// sync) once the replication has ended, else nil.
func (r *Replicator) Results() []*Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Result(nil), r.results...)
}

// Status snapshots the replication. For a sync, State, Stats and Pending
// combine both directions (Directions holds each); the combined state is
// the most urgent one: unauthorized, error, offline, starting, active,
// idle, stopped.
func (r *Replicator) Status() Status {
	if len(r.reps) == 1 {
		return r.reps[0].status()
	}
	st := Status{Replication: r.name, Pending: 0}
	rank := map[State]int{StateUnauthorized: 7, StateError: 6, StateOffline: 5, StateStarting: 4, StateActive: 3, StateIdle: 2, StateStopped: 1}
	for _, rep := range r.reps {
		d := rep.status()
		st.Directions = append(st.Directions, d)
		st.Stats.Add(d.Stats)
		if d.Pending < 0 || st.Pending < 0 {
			st.Pending = -1
		} else {
			st.Pending += d.Pending
		}
		if rank[d.State] > rank[st.State] {
			st.State = d.State
		}
		if d.LastError != nil {
			st.LastError = d.LastError
		}
		if d.Updated.After(st.Updated) {
			st.Updated = d.Updated
		}
	}
	return st
}
