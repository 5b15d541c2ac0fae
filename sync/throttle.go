package sync

import (
	"context"
	"time"
)

// pacer spaces the writes of a throttled replication (Options.Throttle):
// each unit of n documents may start once the ones before it have had
// n/rate seconds each. Time not used while the source had nothing to send
// is not saved up beyond one second's worth.
type pacer struct {
	rate float64 // documents a second; 0: no bound
	next time.Time
}

func newPacer(rate int) *pacer { return &pacer{rate: float64(rate)} }

// wait blocks until a unit of n documents may be written.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p.rate <= 0 {
		return nil
	}
	now := time.Now()
	if floor := now.Add(-time.Second); p.next.Before(floor) {
		p.next = floor
	}
	if d := p.next.Sub(now); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	p.next = p.next.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	return nil
}
