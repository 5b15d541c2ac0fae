package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

// maxHistory bounds a job's history, as CouchDB's [replicator] max_history.
const maxHistory = 20

// job is one replication: a document's, or a POST /_replicate's.
type job struct {
	id     string // the replication id
	docID  string // "" for _replicate
	docRev string
	spec   *Spec
	user   string // who asked, for _replicate; "" for documents

	added, started, updated time.Time
	lastStarted             time.Time // of the current or last run
	history                 []historyEntry
	pid                     string

	sup      *sync.Supervisor // nil while not running
	last     sync.Status      // the last run's status, kept after a crash
	errCount int              // crashes in a row
	lastErr  error
	retryAt  time.Time
	pending  bool // waiting for a slot (MaxJobs)

	// done is closed when a one-shot ends (completed or removed), for
	// POST /_replicate; result is its status then.
	done     chan struct{}
	finished bool
	results  []*sync.Result
	resErr   error
}

type historyEntry struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Reason    string `json:"reason,omitempty"`
}

func (j *job) note(kind, reason string, now time.Time) {
	j.history = append([]historyEntry{{Timestamp: stamp(now), Type: kind, Reason: reason}}, j.history...)
	if len(j.history) > maxHistory {
		j.history = j.history[:maxHistory]
	}
	j.updated = now
}

func stamp(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// peers builds the two endpoints of a spec.
func (s *Scheduler) peers(sp *Spec) (src, tgt *couch.DB, err error) {
	mk := func(e Endpoint) (*couch.DB, error) {
		return couch.New(e.URL, &couch.Options{Username: e.Username, Password: e.Password, Session: e.Session,
			Headers: e.Headers, Transport: s.cfg.Transport})
	}
	if src, err = mk(sp.Source); err != nil {
		return nil, nil, err
	}
	if tgt, err = mk(sp.Target); err != nil {
		return nil, nil, err
	}
	return src, tgt, nil
}

// options are the sync options of a spec.
func options(sp *Spec) sync.Options {
	o := sync.Options{Continuous: sp.Continuous, CreateTarget: sp.CreateTarget, DocIDs: sp.DocIDs,
		Selector: sp.Selector, Filter: sp.Filter, QueryParams: sp.QueryParams, Since: sp.SinceSeq,
		BatchSize: sp.WorkerBatchSize}
	if sp.CheckpointInterval != 0 {
		o.CheckpointInterval = time.Duration(sp.CheckpointInterval) * time.Millisecond
	}
	return o
}

// ReplicationID is a spec's replication id as the scheduler reports it:
// sync.ReplicationID, with CouchDB's "+continuous" and "+create_target".
func (s *Scheduler) ReplicationID(sp *Spec) (string, error) {
	src, tgt, err := s.peers(sp)
	if err != nil {
		return "", err
	}
	o := options(sp)
	o.Source, o.Target = src, tgt
	id := sync.ReplicationID(o)
	if sp.Continuous {
		id += "+continuous"
	}
	if sp.CreateTarget {
		id += "+create_target"
	}
	return id, nil
}

// startLocked starts a job's supervisor.
func (s *Scheduler) startLocked(j *job) error {
	src, tgt, err := s.peers(j.spec)
	if err != nil {
		return err
	}
	o := options(j.spec)
	o.OnEvent = func(ev sync.Event) {
		if ev.Kind == sync.EventState {
			switch ev.State {
			case sync.StateStopped, sync.StateError, sync.StateUnauthorized:
				s.Kick()
			}
		}
	}
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{Local: src, Remote: tgt, Direction: sync.Push, Options: o})
	if err != nil {
		return err
	}
	if err := sup.Start(s.ctx); err != nil {
		return err
	}
	now := time.Now()
	s.pids++
	j.sup, j.pid = sup, fmt.Sprintf("<0.%d.0>", s.pids)
	if j.started.IsZero() {
		j.started = now
	}
	j.lastStarted = now
	j.note("started", "", now)
	s.log.Info("replication started", "id", j.id, "doc", j.docID, "source", j.spec.Source.Display(), "target", j.spec.Target.Display())
	return nil
}

// crashLocked records a failed run: the job starts again after a backoff.
func (s *Scheduler) crashLocked(j *job, err error) {
	now := time.Now()
	j.errCount++
	j.lastErr = err
	delay := s.cfg.RetryDelay << min(j.errCount-1, 16)
	if delay <= 0 || delay > s.cfg.MaxRetryDelay {
		delay = s.cfg.MaxRetryDelay
	}
	j.retryAt = now.Add(delay)
	j.note("crashed", errText(err), now)
	s.log.Warn("replication crashed", "id", j.id, "doc", j.docID, "err", err, "retry_in", delay)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// finish handles a job whose supervisor ended by itself: a one-shot
// that completed, or a run that failed.
func (s *Scheduler) finish(j *job) {
	s.mu.Lock()
	sup := j.sup
	if sup == nil || s.jobs[j.id] != j {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	err := sup.Wait()
	st := sup.Status()
	results := sup.Results()
	s.mu.Lock()
	if s.jobs[j.id] != j || j.sup != sup {
		s.mu.Unlock()
		return
	}
	j.sup, j.last = nil, st
	if err != nil && j.docID == "" && !j.spec.Continuous {
		delete(s.jobs, j.id) // a one-shot _replicate answers its error
		j.closeDone(results, err)
		s.mu.Unlock()
		return
	}
	if err != nil {
		s.crashLocked(j, err)
		s.mu.Unlock()
		return
	}
	if j.spec.Continuous {
		s.mu.Unlock()
		return // stopped with the scheduler
	}
	// A one-shot completed.
	delete(s.jobs, j.id)
	j.note("stopped", "", time.Now())
	j.errCount, j.lastErr = 0, nil
	j.closeDone(results, nil)
	docID, rev := j.docID, j.docRev
	info, _ := json.Marshal(statsOf(st, false))
	if e := s.docs[docID]; docID != "" && e != nil && e.repID == j.id {
		e.state, e.info, e.repID, e.updated = "completed", info, "", time.Now()
	}
	// The document's _replication_stats also say when the job was added,
	// as CouchDB's.
	docStats, _ := json.Marshal(struct {
		stats
		StartTime string `json:"start_time"`
	}{statsOf(st, false), stamp(j.added)})
	s.mu.Unlock()
	s.log.Info("replication completed", "id", j.id, "doc", docID)
	if docID != "" && s.cfg.Docs != nil {
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		if err := s.cfg.Docs.Completed(ctx, docID, rev, docStats); err != nil && ctx.Err() == nil {
			s.log.Warn("record a completed replication", "doc", docID, "err", err)
		}
	}
}

// closeDone ends a one-shot's wait (POST /_replicate).
func (j *job) closeDone(results []*sync.Result, err error) {
	if j.done != nil && !j.finished {
		j.finished, j.results, j.resErr = true, results, err
		close(j.done)
	}
}

// stop stops a job's supervisor, which records its checkpoint.
func (s *Scheduler) stopJob(j *job) {
	s.mu.Lock()
	sup := j.sup
	j.sup = nil
	s.mu.Unlock()
	if sup != nil {
		_ = sup.Stop()
		_ = sup.Wait()
	}
	s.mu.Lock()
	j.closeDone(nil, ErrCancelled)
	s.mu.Unlock()
}

// ErrCancelled: the replication was cancelled or its document deleted
// before it completed.
var ErrCancelled = fmt.Errorf("scheduler: replication cancelled")
