package memlimit

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set in the environment")
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := Apply(); got != Default || debug.SetMemoryLimit(-1) != Default {
		t.Fatalf("Apply with no limit: %d, in effect %d; want %d", got, debug.SetMemoryLimit(-1), Default)
	}
	// A lower limit already in effect is kept.
	debug.SetMemoryLimit(16 << 20)
	if got := Apply(); got != 16<<20 || debug.SetMemoryLimit(-1) != 16<<20 {
		t.Fatalf("Apply under a lower limit: %d, in effect %d; want it kept", got, debug.SetMemoryLimit(-1))
	}
	// GOMEMLIMIT in the environment wins, whatever its value.
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30)
	if got := Apply(); got != 1<<30 {
		t.Fatalf("Apply with GOMEMLIMIT set: %d, want 1 GiB kept", got)
	}
}
