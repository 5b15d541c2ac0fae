package localdb

import "context"

// SetBatchBytes changes OpenRevsBatch's group bound for a test and returns
// a function restoring it.
func SetBatchBytes(n int) (restore func()) {
	old := batchBytes
	batchBytes = n
	return func() { batchBytes = old }
}

// DataVersion exposes the commit watcher's check for its benchmark.
func (db *DB) DataVersion(ctx context.Context) (int64, error) { return db.dataVersion(ctx) }
