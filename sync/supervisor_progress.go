package sync

import gosync "sync"

// progress keeps a Supervisor's Completed and Total monotone across the
// snapshots it gives.
type progress struct {
	mu               gosync.Mutex
	completed, total int64
}

// update folds a snapshot's handled documents and pending count (-1:
// unknown) into the progress and returns it.
func (p *progress) update(done, pending int64) (completed, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.completed = max(p.completed, done)
	if pending >= 0 {
		p.total = max(p.total, p.completed+pending)
		// Pending fell further than documents were handled: the rest
		// needed no work.
		p.completed = max(p.completed, p.total-pending)
	}
	p.total = max(p.total, p.completed)
	return p.completed, p.total
}
