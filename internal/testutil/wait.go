package testutil

import (
	"testing"
	"time"
)

// WaitBound is how long Eventually waits: a guard against a hang, not a
// speed assertion.
const WaitBound = 60 * time.Second

// Eventually polls cond every 20 ms until it holds; it fails the test,
// naming what, when it has not held within WaitBound.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
