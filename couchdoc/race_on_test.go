//go:build race

package couchdoc

// raceDetector reports a test binary built with -race.
const raceDetector = true
