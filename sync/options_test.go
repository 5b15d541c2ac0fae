package sync

import (
	"testing"
	"time"
)

// TestCheckpointIntervalDefaults: a continuous replication checkpoints on
// an interval unless told otherwise; a one-shot one after every batch.
func TestCheckpointIntervalDefaults(t *testing.T) {
	for _, c := range []struct {
		in   Options
		want time.Duration
	}{
		{Options{}, 0},
		{Options{Continuous: true}, DefaultContinuousCheckpointInterval},
		{Options{Continuous: true, CheckpointInterval: -1}, 0},
		{Options{Continuous: true, CheckpointInterval: time.Minute}, time.Minute},
		{Options{CheckpointInterval: 2 * time.Second}, 2 * time.Second},
		{Options{CheckpointInterval: -1}, 0},
	} {
		if got := c.in.withDefaults().CheckpointInterval; got != c.want {
			t.Errorf("continuous %v, interval %v: got %v, want %v", c.in.Continuous, c.in.CheckpointInterval, got, c.want)
		}
	}
}
