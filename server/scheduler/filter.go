package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
)

// designFilter is the design document a spec's filter lives in ("" for
// none, and for the built-in filters, which nothing needs reading for).
func designFilter(sp *Spec) string {
	ddoc, _, ok := strings.Cut(sp.Filter, "/")
	if !ok || strings.HasPrefix(sp.Filter, "_") {
		return ""
	}
	return couchdoc.DesignPrefix + ddoc
}

// checkFilters reads the filters of the documents waiting for theirs
// from their sources, as CouchDB's doc processor before it adds a job: a
// document whose filter is there gets its job; one whose filter is
// missing or unreadable goes to the error state with CouchDB's reason
// and is retried after a backoff (retryFilters). No lock is held while
// a source is read.
func (s *Scheduler) checkFilters(ctx context.Context) {
	s.mu.Lock()
	ids := s.checks
	s.checks = nil
	s.mu.Unlock()
	for _, id := range ids {
		s.mu.Lock()
		e := s.docs[id]
		if e == nil || e.filterRepID == "" {
			s.mu.Unlock()
			continue
		}
		sp := e.spec
		s.mu.Unlock()
		reason := s.readFilter(ctx, sp)
		if ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		if s.docs[id] != e || e.filterRepID == "" {
			s.mu.Unlock()
			continue // changed meanwhile: its new revision is checked
		}
		now := time.Now()
		if reason == "" {
			repID := e.filterRepID
			e.filterRepID = ""
			s.addJobLocked(e, repID)
		} else {
			e.state, e.errMsg, e.updated = "error", reason, now
			e.errCount++
			delay := s.cfg.RetryDelay << min(e.errCount-1, 16)
			if delay <= 0 || delay > s.cfg.MaxRetryDelay {
				delay = s.cfg.MaxRetryDelay
			}
			e.retryAt = now.Add(delay)
			s.log.Warn("replication filter", "doc", id, "err", reason, "retry_in", delay)
		}
		s.mu.Unlock()
	}
	// The jobs added start at the next schedule (Start's, or the loop's).
}

// retryFilters queues the documents in the error state whose backoff is
// over.
func (s *Scheduler) retryFilters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for id, e := range s.docs {
		if e.filterRepID != "" && e.state == "error" && !now.Before(e.retryAt) {
			e.retryAt = now.Add(s.cfg.MaxRetryDelay) // until checked
			s.checks = append(s.checks, id)
		}
	}
}

// readFilter reads sp's filter function from its source; "" when it is
// there, else CouchDB's reason (couch_replicator_filters:fetch).
func (s *Scheduler) readFilter(ctx context.Context, sp *Spec) string {
	ddoc := designFilter(sp)
	_, name, _ := strings.Cut(sp.Filter, "/")
	src, _, err := s.peers(sp)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	body, err := src.GetDoc(ctx, ddoc)
	if err != nil {
		why := err.Error()
		if errors.Is(err, couchdoc.ErrNotFound) {
			why = `{error,<<"not_found">>}`
		}
		return fmt.Sprintf("Couldn't open document `%s` from source database `%s`: %s", ddoc, sp.Source.Display(), why)
	}
	var d struct {
		Filters map[string]json.RawMessage `json:"filters"`
	}
	_ = json.Unmarshal(body, &d)
	if _, ok := d.Filters[name]; !ok {
		missing := "filters"
		if d.Filters != nil {
			missing = name
		}
		return fmt.Sprintf("Couldn't parse filter code from document %s on `%s`  Error: {not_found,<<\"missing json key: %s\">>}",
			strings.TrimPrefix(ddoc, couchdoc.DesignPrefix), sp.Source.Display(), missing)
	}
	return ""
}
