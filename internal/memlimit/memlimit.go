// Package memlimit gives a replicating process (the CLI's pull, push and
// sync; the bench's child, which stands for it) a soft memory limit.
//
// A pull allocates fast (parsed batches, attachment bodies) while its live
// heap stays small (the bench's 100k pull), so
// with the default GOGC=100 the heap grows to about twice that between
// collections, and the process's peak RSS follows. A soft limit
// (runtime/debug.SetMemoryLimit) makes the collector run earlier only when
// the heap nears it: it costs nothing while the live heap is well below
// (the bench's pulls use the same CPU with and without it; a lower limit
// made the collector run often enough to cost much more), and the runtime caps the
// collector's share of the CPU when a larger live heap passes it, so a
// replication of big documents is slowed, never stopped.
//
// It is a process-wide setting, so the library never sets it: programs
// decide (an app embedding the replicator may call Apply too).
package memlimit

import (
	"os"
	"runtime/debug"
)

// Default is the soft limit Apply sets: twice the live heap of the bench's
// pull, plus room for the runtime's own memory.
const Default = 32 << 20

// Apply sets the Go runtime's soft memory limit to Default unless the
// user chose one with the GOMEMLIMIT environment variable (which the
// runtime already applied), or a lower one is in effect. It returns the
// limit now in effect.
func Apply() int64 {
	cur := debug.SetMemoryLimit(-1)
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || cur <= Default {
		return cur
	}
	debug.SetMemoryLimit(Default)
	return Default
}
