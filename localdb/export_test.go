package localdb

import (
	"context"
	"fmt"

	"github.com/settee/settee/localdb/internal/indexstore"
)

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

// PageSettings reports the file's page size and the writer's cache_size.
func (db *DB) PageSettings(ctx context.Context) (pageSize, writerCache int64, err error) {
	if err = db.writer.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err == nil {
		err = db.writer.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&writerCache)
	}
	return pageSize, writerCache, err
}

// SetWALBounds changes the checkpointer's thresholds (checkpoint.go) for a
// test.
func (db *DB) SetWALBounds(soft, hard int64) {
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	db.ckpt.soft, db.ckpt.hard = soft, hard
}

// PauseCheckpointer keeps the background checkpointer from checkpointing,
// so that only the writer's hard bound does.
func (db *DB) PauseCheckpointer(paused bool) {
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	db.ckpt.paused = paused
}

// InlineCheckpoints turns SQLite's auto-checkpoint (1,000 pages, inside
// the commit) back on and the checkpointer off: the old behaviour, for
// benchmarks.
func (db *DB) InlineCheckpoints(pages int) error {
	db.PauseCheckpointer(true)
	db.SetWALBounds(1<<62, 1<<62)
	db.wmu.Lock()
	defer db.wmu.Unlock()
	_, err := db.writer.Exec(fmt.Sprintf("PRAGMA wal_autocheckpoint(%d)", pages))
	return err
}

// CheckpointerStopped reports whether the checkpointer's goroutine has
// returned and its connection is closed.
func (db *DB) CheckpointerStopped() bool {
	select {
	case <-db.ckpt.done:
	default:
		return false
	}
	return db.ckpt.conn.Ping() != nil
}

// SetFreshLimit makes every commit that leaves more than n rows in
// mango_fresh merge them (indexstore/fresh.go), for a test; it returns a
// function restoring the limit.
func SetFreshLimit(n int64) (restore func()) { return indexstore.SetFreshLimit(n) }

// FreshRows is the number of rows in mango_fresh and in mango_entries.
func (db *DB) FreshRows(ctx context.Context) (fresh, entries int64, err error) {
	err = db.reads.conns.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM mango_fresh), (SELECT COUNT(*) FROM mango_entries)").Scan(&fresh, &entries)
	return fresh, entries, err
}

// CopyFreshToEntries copies every fresh entry into mango_entries naming
// revision row 1, as a bug leaving a stale entry behind would, for a test
// of the merge's fallback.
func (db *DB) CopyFreshToEntries(ctx context.Context) (int64, error) {
	res, err := db.writer.ExecContext(ctx, "INSERT INTO mango_entries (ix_id, key, rev_row) SELECT ix_id, key, 1 FROM mango_fresh")
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// DamageChunk flips one bit of chunk idx of the content stored under
// digest, as a damaged disk would, for a test of the chunk checksums.
func (db *DB) DamageChunk(ctx context.Context, digest string, idx int) error {
	var data []byte
	var key string
	if err := db.writer.QueryRowContext(ctx, "SELECT COALESCE(chunks, digest) FROM att_content WHERE digest = ?", digest).Scan(&key); err != nil {
		return fmt.Errorf("content %s: %w", digest, err)
	}
	if err := db.writer.QueryRowContext(ctx, "SELECT data FROM att_chunks WHERE digest = ? AND idx = ?", key, idx).Scan(&data); err != nil {
		return fmt.Errorf("chunk %d of %s: %w", idx, digest, err)
	}
	data[len(data)/2] ^= 1
	_, err := db.writer.ExecContext(ctx, "UPDATE att_chunks SET data = ? WHERE digest = ? AND idx = ?", data, key, idx)
	return err
}

// DropChunkCRCs removes every chunk's checksum, as in a store written
// before schema 9.
func (db *DB) DropChunkCRCs(ctx context.Context) error {
	_, err := db.writer.ExecContext(ctx, "UPDATE att_chunks SET crc = NULL")
	return err
}

// ChunkKeys lists the keys attachment chunks are stored under, with the
// count of chunks under each, and the content that names each key
// (att_content.chunks).
func (db *DB) ChunkKeys(ctx context.Context) (chunks map[string]int, named map[string]string, err error) {
	chunks, named = map[string]int{}, map[string]string{}
	rows, err := db.writer.QueryContext(ctx, "SELECT digest, COUNT(*) FROM att_chunks GROUP BY digest")
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			rows.Close()
			return nil, nil, err
		}
		chunks[k] = n
	}
	rows.Close()
	rows, err = db.writer.QueryContext(ctx, "SELECT digest, chunks FROM att_content WHERE chunks IS NOT NULL")
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var d, k string
		if err := rows.Scan(&d, &k); err != nil {
			return nil, nil, err
		}
		named[d] = k
	}
	return chunks, named, rows.Err()
}

// WatchChecks is how many times the commit watcher asked SQLite whether
// another connection committed.
func (db *DB) WatchChecks() int64 { return db.watchChecks.Load() }

// WatchStarts is how many times the commit watcher's goroutine started.
func (db *DB) WatchStarts() int64 { return db.watchStarts.Load() }

// Watching reports whether the commit watcher's goroutine runs.
func (db *DB) Watching() bool {
	db.lmu.Lock()
	defer db.lmu.Unlock()
	return db.watching
}

// HeadReads is how many times the commit watcher read the feed's head.
func (db *DB) HeadReads() int64 { return db.headReads.Load() }

// BreakNotify makes new file watches fail (true) or work again (false).
func BreakNotify(broken bool) { notifyBroken.Store(broken) }
