package query

// SetViewChunks turns the reading of view chunk records on or off (the
// benchmarks compare the two) and returns a func that restores it.
func SetViewChunks(on bool) func() {
	was := noViewChunks.Swap(!on)
	return func() { noViewChunks.Store(was) }
}
