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

// MmapSizes reports PRAGMA mmap_size on a connection of each read pool.
func (db *DB) MmapSizes(ctx context.Context) (reads, queries int64, err error) {
	if err = db.reads.conns.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&reads); err == nil {
		err = db.queries.conns.QueryRowContext(ctx, "PRAGMA mmap_size").Scan(&queries)
	}
	return reads, queries, err
}
