package localdb

import (
	"context"
	"database/sql"
	"time"
)

// watchInterval is how often a followed store asks SQLite whether another
// connection committed. It bounds how late a feed sees a write made by
// another process (or another DB value on the same file).
const watchInterval = 100 * time.Millisecond

// The commit watcher: how Follow hears of another connection's commits
// (the reasons are in Follow's doc comment). A commit made through this
// DB wakes feed readers at once (update calls noteSeq). For the others a
// goroutine runs while at least one feed waits: every watchInterval it
// asks a dedicated connection for PRAGMA data_version, which changes
// exactly when another connection has committed to the file since the
// last ask; only then does it read the feed's newest sequence (MAX(seq),
// on its unique index) and wake the waiters if it moved.

// noteSeq records that the feed reached seq (never moving it back) and
// wakes the waiters when it moved.
func (db *DB) noteSeq(seq int64) {
	for {
		cur := db.updateSeq.Load()
		if seq <= cur {
			return
		}
		if db.updateSeq.CompareAndSwap(cur, seq) {
			db.broadcast()
			return
		}
	}
}

// addWaiter counts a feed waiting for a change and starts the watcher if
// none runs. It fails once Close has begun.
func (db *DB) addWaiter() error {
	db.lmu.Lock()
	defer db.lmu.Unlock()
	if db.closed {
		return ErrClosed
	}
	db.waiters++
	if !db.watching {
		db.watching = true
		db.subs.Add(1)
		go db.watch()
	}
	return nil
}

func (db *DB) removeWaiter() {
	db.lmu.Lock()
	db.waiters--
	db.lmu.Unlock()
}

// watch is the watcher goroutine: it ends when no feed waits any more or
// the database closes.
func (db *DB) watch() {
	defer db.subs.Done()
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	ctx := context.Background()
	// The first answer is the baseline; the feed's state at that point
	// is read too, for a commit made before the watcher started.
	last := int64(-1)
	for {
		db.lmu.Lock()
		if db.closed || db.waiters == 0 {
			db.watching = false
			db.lmu.Unlock()
			return
		}
		db.lmu.Unlock()
		if v, err := db.dataVersion(ctx); err == nil && v != last {
			last = v
			if seq, err := db.maxSeq(ctx); err == nil {
				db.noteSeq(seq)
			}
		}
		select {
		case <-t.C:
		case <-db.closing:
		}
	}
}

// dataVersion asks the watcher's own connection (one, kept open) for
// PRAGMA data_version: the value is per connection, so it must always be
// asked on the same one. Should the pool replace it, the next answer
// differs and costs one extra MAX(seq), no more.
func (db *DB) dataVersion(ctx context.Context) (int64, error) {
	var v int64
	err := db.watcher.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
	return v, err
}

func (db *DB) maxSeq(ctx context.Context) (int64, error) {
	var seq sql.NullInt64
	err := db.watcher.QueryRowContext(ctx, "SELECT MAX(seq) FROM docs").Scan(&seq)
	return seq.Int64, err
}
