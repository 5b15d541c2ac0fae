package localdb

import (
	"context"
	"database/sql"
	"time"
)

// WatchMode picks how a DB's live feeds (Follow's longpoll and continuous
// feeds) hear of commits made by another process. Commits made in this
// process, through this DB or any other DB open on the same file, wake
// them directly in every mode.
type WatchMode int

const (
	// WatchNotify, the default, has the operating system report writes
	// to the file's write-ahead log (fsnotify: inotify on Linux and
	// Android, kqueue on macOS and iOS, ReadDirectoryChangesW on
	// Windows), and reads the feed's head only after one. Nothing runs
	// while nothing is written. Where the notification cannot be set up
	// (an unsupported platform, a system limit reached) or the log is
	// removed under it, it falls back to WatchPoll.
	WatchNotify WatchMode = iota
	// WatchPoll asks SQLite every Options.PollInterval whether another
	// connection committed (PRAGMA data_version).
	WatchPoll
	// WatchLocal sees only this process's commits: the cheapest mode,
	// for a store no other process writes (an app's own store).
	WatchLocal
)

// DefaultPollInterval is WatchPoll's interval, and the fallback's: it
// keeps a feed within a second of another process's commit.
const DefaultPollInterval = 500 * time.Millisecond

// notifyGap is the least time between two checks woken by file events:
// a burst of writes (a pull into the store, each page a write to the log)
// costs at most one check per gap.
const notifyGap = 20 * time.Millisecond

// trailing are the delays of the checks that follow a file event. A
// commit writes its frames to the log (the events), syncs the log, and
// only then publishes itself in the shared-memory index, which no event
// reports: the check an event wakes can run during that sync and see
// nothing yet. Checks at growing intervals after the last event see it
// once published (within a second for a sync of up to about 0.7 s; the
// last one 6 s later), and cost a few queries per burst of writes.
var trailing = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}

// The commit watcher: how Follow hears of other processes' commits. A
// commit made through a DB of this process wakes the feed readers of
// every DB open on the file at once (update calls committed). For other
// processes a goroutine per DB runs while at least one of its feeds
// waits: on each file event (or tick, when polling) it asks a dedicated
// connection for PRAGMA data_version, which changes exactly when another
// connection has committed to the file since the last ask; only then does
// it read the feed's newest sequence (MAX(seq), on its unique index) and
// wake the waiters if it moved. The file watch is held only while a feed
// waits, so a pull into a store nobody follows gets no file events.

// committed wakes the feeds of every DB of this process open on the file
// for a commit that took the feed to seq.
func (db *DB) committed(seq int64) {
	db.noteSeq(seq)
	files.noteSiblings(db, seq)
}

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
	if !db.watching && db.watchMode != WatchLocal {
		db.watching = true
		db.subs.Add(1)
		go db.watch()
	}
	return nil
}

func (db *DB) removeWaiter() {
	db.lmu.Lock()
	db.waiters--
	last := db.waiters == 0
	db.lmu.Unlock()
	if last {
		db.wakeWatcher() // it ends, and lets go of the file watch
	}
}

// wakeWatcher wakes the watcher goroutine; the wake-up is kept (one) when
// it is busy.
func (db *DB) wakeWatcher() {
	select {
	case db.wake <- struct{}{}:
	default:
	}
}

// watch is the watcher goroutine: it ends when no feed waits any more or
// the database closes.
func (db *DB) watch() {
	defer db.subs.Done()
	ctx := context.Background()
	var tick <-chan time.Time
	notified := false
	if db.watchMode == WatchNotify {
		// The log exists once a connection has read the file in WAL mode
		// (Open did); the check after the watch is set sees a commit made
		// before it.
		notified = files.watchWAL(db) == nil
		if notified {
			defer files.unwatchWAL(db)
		}
	}
	if !notified {
		t := time.NewTicker(db.pollInterval)
		defer t.Stop()
		tick = t.C
	}
	// The first answer is the baseline; the feed's state at that point
	// is read too, for a commit made before the watcher started.
	last := int64(-1)
	var trail *time.Timer
	var trailC <-chan time.Time
	step := len(trailing)
	defer func() {
		if trail != nil {
			trail.Stop()
		}
	}()
	for {
		db.lmu.Lock()
		if db.closed || db.waiters == 0 {
			db.watching = false
			db.lmu.Unlock()
			return
		}
		db.lmu.Unlock()
		db.watchChecks.Add(1)
		if v, err := db.dataVersion(ctx); err == nil && v != last {
			last = v
			if seq, err := db.maxSeq(ctx); err == nil {
				db.noteSeq(seq)
			}
		}
		checked := time.Now()
		trailC = nil
		if notified && step < len(trailing) {
			if trail == nil {
				trail = time.NewTimer(trailing[step])
			} else {
				trail.Reset(trailing[step])
			}
			trailC = trail.C
			step++
		}
		select {
		case <-tick:
		case <-trailC:
		case <-db.wake:
			step = 0
		case <-db.closing:
		}
		if notified && tick == nil && files.lost(db) {
			// The log was removed under the watch: poll from now on.
			t := time.NewTicker(db.pollInterval)
			defer t.Stop()
			tick = t.C
		}
		if wait := notifyGap - time.Since(checked); notified && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-db.closing:
				t.Stop()
			}
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
