//go:build race

package query_test

// raceEnabled: the race detector slows the tests about tenfold.
const raceEnabled = true
