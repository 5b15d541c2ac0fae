package scheduler

import (
	"sort"
	"time"

	"github.com/settee/settee/sync"
)

// rotate gives the pending jobs their turn when MaxJobs are running, as
// CouchDB's scheduler every interval (rotate_jobs): it stops up to
// MaxChurn of the continuous jobs that have run longest since their last
// start (each records its checkpoint and waits, pending) and schedules,
// which starts as many of the pending jobs, those that waited longest
// first. One-shot jobs run to their end, as in CouchDB.
func (s *Scheduler) rotate() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	now := time.Now()
	running, pending := 0, 0
	var continuous []*job
	for _, j := range s.jobs {
		switch {
		case j.sup != nil:
			running++
			if j.spec.Continuous {
				continuous = append(continuous, j)
			}
		case j.pending && !j.finished && !now.Before(j.retryAt):
			pending++
		}
	}
	if running < s.cfg.MaxJobs || pending == 0 {
		s.mu.Unlock()
		return
	}
	sort.Slice(continuous, func(a, b int) bool { return continuous[a].lastStarted.Before(continuous[b].lastStarted) })
	n := min(s.cfg.MaxChurn, pending, len(continuous))
	sups := make([]*sync.Supervisor, 0, n)
	for _, j := range continuous[:n] {
		sups = append(sups, j.sup)
		j.sup, j.pending = nil, true
		j.note("stopped", "", now)
		s.log.Info("replication rotated out", "id", j.id, "doc", j.docID)
	}
	s.mu.Unlock()
	for _, sup := range sups {
		_ = sup.Stop()
		_ = sup.Wait()
	}
	s.schedule()
}
