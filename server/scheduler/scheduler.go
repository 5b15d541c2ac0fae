package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sort"
	gosync "sync"
	"time"
)

// Docs is the replication database as the scheduler reads it.
type Docs interface {
	// Changes calls fn for each document changed after since in the
	// database epoch (every document for since 0), in order, with its
	// winning revision and body, and returns the sequence reached. epoch
	// names the database's incarnation (its UUID; "" when it does not
	// exist): when it changes, sequences start again.
	Changes(ctx context.Context, epoch string, since int64, fn func(id, rev string, deleted bool, body []byte) error) (newEpoch string, seq int64, err error)
	// Completed records in the document's revision rev that its one-shot
	// replication completed, as CouchDB does (_replication_state,
	// _replication_state_time, _replication_stats), so that it is not run
	// again. A document changed since is left alone.
	Completed(ctx context.Context, id, rev string, stats json.RawMessage) error
	// Failed records in the document's revision rev that it cannot run
	// (a body the scheduler refuses, a duplicate), as CouchDB does
	// (_replication_state "failed", _replication_state_reason), so that
	// it is not run again until it is edited. A document changed since
	// is left alone.
	Failed(ctx context.Context, id, rev, reason string) error
	// ClearState removes the state members an older CouchDB left in a
	// document ("triggered", "error"), as CouchDB 3.5 does before running
	// it. A document changed since is left alone.
	ClearState(ctx context.Context, id, rev string) error
}

// Config configures a Scheduler.
type Config struct {
	// Docs are the replication documents; nil runs _replicate jobs only.
	Docs Docs
	// Database names the replication database in reports ("_replicator").
	Database string
	// Node names this server in reports (CouchDB's node name).
	Node string
	// MaxJobs bounds the jobs running at once; the others are pending
	// (CouchDB's [replicator] max_jobs). Default 500.
	MaxJobs int
	// Interval is how often the jobs are rotated when more wait than
	// MaxJobs lets run: up to MaxChurn of the continuous jobs that have
	// run longest since their last start stop (pending) and as many
	// pending ones start, so that every job gets its turn (CouchDB's
	// [replicator] interval and max_churn). Defaults 60 s and 20.
	Interval time.Duration
	MaxChurn int
	// RetryDelay is the wait before a crashed job starts again, doubled
	// at each crash in a row up to MaxRetryDelay. Defaults 5 s and 10 min.
	RetryDelay, MaxRetryDelay time.Duration
	// PollInterval is how often Docs is read for changes that no Kick
	// announced. Default 5 s.
	PollInterval time.Duration
	// Transport, when set, carries the jobs' requests (tests).
	Transport http.RoundTripper
	// Logger receives job starts, crashes and ends (never credentials).
	Logger *slog.Logger
}

// Scheduler runs replication jobs. Its methods are safe for concurrent use.
type Scheduler struct {
	cfg Config
	log *slog.Logger

	mu      gosync.Mutex
	docs    map[string]*docEntry // by document id
	jobs    map[string]*job      // by replication id
	epoch   string
	seq     int64
	started bool
	closed  bool
	ctx     context.Context
	cancel  context.CancelFunc
	kick    chan struct{}
	wg      gosync.WaitGroup
	pids    int
	// writes are the document updates the last read decided on, made
	// once the lock is released.
	writes []docWrite
	// checks are the documents whose filter is to be read (checkFilters).
	checks []string
}

// docWrite is a state to write into a replication document.
type docWrite struct {
	id, rev string
	failed  string // the reason of a failed document; "" clears the state
}

// New returns a scheduler that is not started. It does no I/O.
func New(cfg Config) *Scheduler {
	if cfg.Database == "" {
		cfg.Database = "_replicator"
	}
	if cfg.Node == "" {
		cfg.Node = "settee@127.0.0.1"
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = 500
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = 5 * time.Second
	}
	if cfg.MaxRetryDelay <= 0 {
		cfg.MaxRetryDelay = 10 * time.Minute
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.MaxChurn <= 0 {
		cfg.MaxChurn = 20
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Scheduler{cfg: cfg, log: log, docs: map[string]*docEntry{}, jobs: map[string]*job{}, kick: make(chan struct{}, 1)}
}

// ErrClosed: the scheduler was closed.
var ErrClosed = errors.New("scheduler: closed")

// Start reads the replication documents, starts their jobs (resuming
// each from its checkpoints) and keeps them in step with the documents
// until Close. It returns how many jobs it started. Starting a started
// scheduler does nothing and returns 0.
func (s *Scheduler) Start(ctx context.Context) (int, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	if s.started {
		s.mu.Unlock()
		return 0, nil
	}
	s.started = true
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mu.Unlock()
	s.readDocs(ctx)
	n := s.schedule()
	s.wg.Add(1)
	go s.loop()
	return n, nil
}

// Kick makes the scheduler read the replication documents now (a write
// to the replication database).
func (s *Scheduler) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Close stops every job (each records its checkpoint) and waits for them.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cancel := s.cancel
	jobs := make([]*job, 0, len(s.jobs))
	for _, j := range s.jobs {
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	// The jobs stop before their context ends, so that each ends its
	// session as Stop does, with its checkpoint: cancelled first, a
	// session could end before it recorded the last batch's. Closed, the
	// scheduler starts no job meanwhile.
	var wg gosync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stopJob(j)
		}()
	}
	wg.Wait()
	cancel()
	s.wg.Wait()
	return nil
}

// loop follows the documents and the jobs until Close.
func (s *Scheduler) loop() {
	defer s.wg.Done()
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	churn := time.NewTicker(s.cfg.Interval)
	defer churn.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-churn.C:
			s.rotate()
		case <-s.kick:
			s.readDocs(s.ctx)
		case <-poll.C:
			s.readDocs(s.ctx)
		case <-tick.C:
			s.retryFilters()
			s.checkFilters(s.ctx)
			s.flushWrites(s.ctx)
		}
		s.schedule()
	}
}

// readDocs applies the documents changed since the last read.
func (s *Scheduler) readDocs(ctx context.Context) {
	if s.cfg.Docs == nil {
		return
	}
	s.mu.Lock()
	epoch, since := s.epoch, s.seq
	s.mu.Unlock()
	type change struct {
		id, rev string
		deleted bool
		body    []byte
	}
	var changes []change
	newEpoch, seq, err := s.cfg.Docs.Changes(ctx, epoch, since, func(id, rev string, deleted bool, body []byte) error {
		changes = append(changes, change{id, rev, deleted, body})
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("read replication documents", "err", err)
		}
		return
	}
	s.mu.Lock()
	var stop []*job
	if newEpoch != epoch {
		for id := range s.docs {
			stop = append(stop, s.removeDocLocked(id)...)
		}
	}
	s.epoch, s.seq = newEpoch, seq
	for _, c := range changes {
		stop = append(stop, s.applyDocLocked(c.id, c.rev, c.deleted, c.body)...)
	}
	s.mu.Unlock()
	for _, j := range stop {
		s.stopJob(j)
	}
	s.checkFilters(ctx)
	s.flushWrites(ctx)
}

// flushWrites makes the document writes decided on. The scheduler reads
// them back as any change: a failed document is never run, a cleared one
// is the replication it runs.
func (s *Scheduler) flushWrites(ctx context.Context) {
	s.mu.Lock()
	writes := s.writes
	s.writes = nil
	s.mu.Unlock()
	for _, w := range writes {
		var err error
		if w.failed != "" {
			err = s.cfg.Docs.Failed(ctx, w.id, w.rev, w.failed)
		} else {
			err = s.cfg.Docs.ClearState(ctx, w.id, w.rev)
		}
		if err != nil && ctx.Err() == nil {
			s.log.Warn("record a replication document's state", "doc", w.id, "err", err)
		}
	}
	if len(writes) > 0 {
		s.Kick()
	}
}

// schedule starts the jobs that may run, finishes those that ended and
// returns how many it started.
func (s *Scheduler) schedule() int {
	s.mu.Lock()
	if s.closed || s.ctx == nil {
		s.mu.Unlock()
		return 0
	}
	now := time.Now()
	running := 0
	var ended []*job
	for _, j := range s.jobs {
		if j.sup != nil {
			if j.sup.Started() {
				running++
			} else {
				ended = append(ended, j)
			}
		}
	}
	s.mu.Unlock()
	for _, j := range ended {
		s.finish(j)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	// The jobs that waited longest since their last run (never run
	// first) start first, as CouchDB's start_pending_jobs.
	sort.Slice(ids, func(a, b int) bool {
		x, y := s.jobs[ids[a]], s.jobs[ids[b]]
		if !x.lastStarted.Equal(y.lastStarted) {
			return x.lastStarted.Before(y.lastStarted)
		}
		return x.added.Before(y.added)
	})
	started := 0
	for _, id := range ids {
		j := s.jobs[id]
		if j.sup != nil || j.finished || now.Before(j.retryAt) {
			continue
		}
		if running >= s.cfg.MaxJobs {
			j.pending = true
			continue
		}
		j.pending = false
		if err := s.startLocked(j); err != nil {
			s.crashLocked(j, err)
			continue
		}
		running++
		started++
	}
	return started
}
