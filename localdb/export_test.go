package localdb

// SetBatchBytes changes OpenRevsBatch's group bound for a test and returns
// a function restoring it.
func SetBatchBytes(n int) (restore func()) {
	old := batchBytes
	batchBytes = n
	return func() { batchBytes = old }
}
