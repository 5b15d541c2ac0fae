package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/settee/settee/sync"
)

// Handle is a replication started by Add (POST /_replicate).
type Handle struct {
	s *Scheduler
	j *job
}

// DuplicateError: a replication document runs that replication already.
type DuplicateError struct{ ID, DocID, Database string }

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("Replication `%s` already started, triggered by document `%s` from db `%s`", e.ID, e.DocID, e.Database)
}

// ID is the replication id (CouchDB's _local_id).
func (h *Handle) ID() string { return h.j.id }

// Add starts a replication no document describes, for user (POST
// /_replicate). A continuous one runs until Cancel or Close; a one-shot
// ends by itself (Wait) and is not retried when it fails. When _replicate
// runs the same replication already, Add returns its handle; when a
// document runs it, a *DuplicateError.
func (s *Scheduler) Add(sp *Spec, user string) (*Handle, error) {
	id, err := s.ReplicationID(sp)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if j := s.jobs[id]; j != nil && j.docID != "" {
		s.mu.Unlock()
		return nil, &DuplicateError{ID: id, DocID: j.docID, Database: s.cfg.Database}
	} else if j != nil {
		s.mu.Unlock()
		return &Handle{s, j}, nil
	}
	now := time.Now()
	j := &job{id: id, spec: sp, user: user, added: now, updated: now, done: make(chan struct{})}
	j.note("added", "", now)
	s.jobs[id] = j
	s.mu.Unlock()
	s.schedule()
	return &Handle{s, j}, nil
}

// Wait waits for a one-shot to end and returns the results of its
// session and the error that ended it: ErrCancelled when it was
// cancelled, ctx's error when ctx ended first (the replication goes on).
func (h *Handle) Wait(ctx context.Context) ([]*sync.Result, error) {
	select {
	case <-h.j.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.j.results, h.j.resErr
}

// Cancel stops the replication of that id that Add started; false when
// none runs.
func (s *Scheduler) Cancel(id string) bool {
	s.mu.Lock()
	j := s.jobs[id]
	if j == nil || j.docID != "" {
		s.mu.Unlock()
		return false
	}
	delete(s.jobs, id)
	s.mu.Unlock()
	s.stopJob(j)
	return true
}

// ReplicateUser is the user who started the _replicate job of that id;
// false when no _replicate job has it.
func (s *Scheduler) ReplicateUser(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil || j.docID != "" {
		return "", false
	}
	return j.user, true
}
