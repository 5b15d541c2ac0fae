package rtest

import (
	"fmt"
	"sync/atomic"
)

// Counters are the figures the reliability tests report: what ran, what was
// injected, and what was lost (which must stay zero; a loss also fails the
// test that saw it).
type Counters struct {
	Scenarios, Faults, Crashes, Seeds, Lost atomic.Int64
}

// Count is the package-wide tally, printed by Report.
var Count Counters

// Report formats the counters in one line.
func (c *Counters) Report() string {
	return fmt.Sprintf("scenarios=%d faults_injected=%d crashes_survived=%d seeds_converged=%d lost=%d",
		c.Scenarios.Load(), c.Faults.Load(), c.Crashes.Load(), c.Seeds.Load(), c.Lost.Load())
}
