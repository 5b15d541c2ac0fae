package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/settee/settee/couchdoc"
)

// docEntry is a replication document as the scheduler last read it.
type docEntry struct {
	id, rev string
	spec    *Spec
	// repID names the job the document runs; "" when it runs none.
	repID string
	// state is the document's own state when it runs no job:
	// "completed", "failed" (a duplicate, or a body the scheduler cannot
	// run) or "error".
	state            string
	errMsg           string
	errCount         int
	info             json.RawMessage
	started, updated time.Time
	// filterRepID is the replication of a document whose filter is read
	// before its job is added (state "initializing", then "error" until
	// it is found, retried at retryAt).
	filterRepID string
	retryAt     time.Time
}

// applyDocLocked takes a document's new revision into account and
// returns the jobs to stop. As CouchDB 3.5's doc processor: a "completed"
// document is done, a "failed" one is shown as failed and never run; the
// state an older CouchDB left ("triggered", "error") is cleared and the
// document run; a document that cannot run (a body refused, a duplicate
// of a running replication) is recorded as failed in it.
func (s *Scheduler) applyDocLocked(id, rev string, deleted bool, body []byte) []*job {
	if deleted {
		return s.removeDocLocked(id)
	}
	now := time.Now()
	var head struct {
		State  string          `json:"_replication_state"`
		Reason json.RawMessage `json:"_replication_state_reason"`
		Time   string          `json:"_replication_state_time"`
	}
	_ = json.Unmarshal(body, &head)
	sp, err := ParseSpec(body)
	switch head.State {
	case "completed":
		if err == nil {
			return s.completedDocLocked(id, rev, sp, body)
		}
	case "failed":
		stop := s.removeDocLocked(id)
		e := &docEntry{id: id, rev: rev, spec: sp, state: "failed", errCount: 1}
		var reason string
		if json.Unmarshal(head.Reason, &reason) != nil {
			reason = string(head.Reason)
		}
		e.errMsg = reason
		e.started, _ = time.Parse(time.RFC3339, head.Time)
		e.updated = e.started
		s.docs[id] = e
		return stop
	case "triggered", "error":
		s.writes = append(s.writes, docWrite{id: id, rev: rev})
	}
	var repID string
	if err == nil {
		repID, err = s.ReplicationID(sp)
	}
	if old := s.docs[id]; err == nil && old != nil && old.repID == repID && sameSpec(old.spec, sp) {
		old.rev = rev
		if j := s.jobs[repID]; j != nil && j.docID == id {
			j.docRev = rev
		}
		return nil // the same replication: it goes on
	}
	stop := s.removeDocLocked(id)
	e := &docEntry{id: id, rev: rev, spec: sp, started: now, updated: now}
	s.docs[id] = e
	if err != nil {
		var ce *couchdoc.Error
		if errors.As(err, &ce) {
			e.errMsg = ce.Reason
		} else {
			e.errMsg = err.Error()
		}
		e.state, e.errCount = "failed", 1
		s.writes = append(s.writes, docWrite{id: id, rev: rev, failed: e.errMsg})
		return stop
	}
	if designFilter(sp) != "" {
		// As CouchDB's doc processor, the filter is read from the source
		// before the job is added: a missing one puts the document in
		// the error state (checkFilters), retried later.
		e.state, e.repID, e.filterRepID = "initializing", "", repID
		s.checks = append(s.checks, id)
		return stop
	}
	s.addJobLocked(e, repID)
	return stop
}

// addJobLocked makes the job of a document that can run, or fails it as
// a duplicate of a running replication.
func (s *Scheduler) addJobLocked(e *docEntry, repID string) {
	id, rev, sp, now := e.id, e.rev, e.spec, time.Now()
	if j := s.jobs[repID]; j != nil {
		by := "a _replicate request"
		if j.docID != "" {
			by = fmt.Sprintf("document `%s` from db `%s`", j.docID, s.cfg.Database)
		}
		e.state, e.errCount = "failed", 1
		e.errMsg = fmt.Sprintf("Replication `%s` specified by document `%s` already started, triggered by %s", repID, id, by)
		if j.docID != "" {
			// CouchDB retries a document that duplicates a _replicate
			// job (a temporary error) but fails one that duplicates
			// another document's for good.
			s.writes = append(s.writes, docWrite{id: id, rev: rev, failed: e.errMsg})
		}
		return
	}
	e.state, e.repID = "", repID
	j := &job{id: repID, docID: id, docRev: rev, spec: sp, added: now, updated: now}
	j.note("added", "", now)
	s.jobs[repID] = j
}

// sameSpec reports whether two specs describe the same replication, their
// documents' states aside (clearing an old state does not restart it).
func sameSpec(a, b *Spec) bool {
	if a == nil || b == nil {
		return false
	}
	x, y := *a, *b
	x.State, y.State = "", ""
	return reflect.DeepEqual(x, y)
}

// completedDocLocked takes a document whose one-shot completed.
func (s *Scheduler) completedDocLocked(id, rev string, sp *Spec, body []byte) []*job {
	stop := s.removeDocLocked(id)
	var done struct {
		Stats map[string]json.RawMessage `json:"_replication_stats"`
		Time  string                     `json:"_replication_state_time"`
	}
	_ = json.Unmarshal(body, &done)
	e := &docEntry{id: id, rev: rev, spec: sp, state: "completed", info: json.RawMessage(`{}`)}
	// The stats' start_time is the entry's, not a member of its info.
	var started string
	_ = json.Unmarshal(done.Stats["start_time"], &started)
	e.started, _ = time.Parse(time.RFC3339, started)
	e.updated, _ = time.Parse(time.RFC3339, done.Time)
	delete(done.Stats, "start_time")
	if len(done.Stats) > 0 {
		e.info, _ = json.Marshal(done.Stats)
	}
	s.docs[id] = e
	return stop
}

// removeDocLocked forgets a document and returns its job, to stop.
func (s *Scheduler) removeDocLocked(id string) []*job {
	e := s.docs[id]
	if e == nil {
		return nil
	}
	delete(s.docs, id)
	if j := s.jobs[e.repID]; e.repID != "" && j != nil && j.docID == id {
		delete(s.jobs, e.repID)
		return []*job{j}
	}
	return nil
}
