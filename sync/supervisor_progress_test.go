package sync

import "testing"

func TestProgressIsMonotone(t *testing.T) {
	var p progress
	for i, step := range []struct {
		done, pending int64
		c, t          int64
	}{
		{0, -1, 0, 0},   // nothing counted yet
		{0, 10, 0, 10},  // the source counts 10 changes
		{3, 7, 3, 10},   // 3 handled
		{3, 9, 3, 12},   // 2 new changes arrive
		{3, -1, 3, 12},  // a new session, not counted yet: nothing moves back
		{5, 4, 8, 12},   // pending fell by 5 for 2 handled: the rest needed no work
		{5, 6, 8, 14},   // 2 more arrive
		{12, 0, 14, 14}, // caught up: Completed == Total
		{0, 0, 14, 14},  // a snapshot with smaller counters cannot move it back
		{14, 3, 14, 17},
	} {
		c, tot := p.update(step.done, step.pending)
		if c != step.c || tot != step.t {
			t.Fatalf("step %d: update(%d, %d) = %d/%d, want %d/%d", i, step.done, step.pending, c, tot, step.c, step.t)
		}
	}
}
