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
// costs at most one check per gap, no more than the old ten-a-second poll
// while a sync writes, and nothing while nothing is written.
const notifyGap = 100 * time.Millisecond

// watchLinger is how long the watcher outlives its last waiting feed. A
// continuous feed waits again as soon as it has sent its rows: kept
// between its waits, the watcher does not set up its goroutine, its file
// watch and its baseline check again for every change.
const watchLinger = time.Second

// trailing are the delays of the checks that follow a file event. A
// commit writes its frames to the log (the events), syncs the log, and
// only then publishes itself in the shared-memory index, which no event
// reports: the check an event wakes can run during that sync and see
// nothing yet. Checks at growing intervals after the last event see it
// once published (within a second for a sync of up to about 0.8 s; the
// last one 6 s later), and cost a few queries per burst of writes.
var trailing = []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}

// The commit watcher: how Follow hears of other processes' commits. A
// commit made through a DB of this process wakes the feed readers of
// every DB open on the file at once (update calls committed). For other
// processes a goroutine per DB runs while at least one of its feeds
// waits (and watchLinger after): on each file event (or tick, when
// polling) it asks SQLite for PRAGMA data_version, which changes exactly
// when another connection has committed to the file since the last ask
// on the same connection (see versions.changed); only then does it read
// the feed's newest sequence (MAX(seq), on its unique index) and wake the
// waiters if it moved. The file watch is held only while the goroutine
// runs, so a pull into a store nobody follows gets no file events.

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
		db.watchStarts.Add(1)
		db.subs.Add(1)
		go db.watch()
	}
	return nil
}

// removeWaiter uncounts a feed; the watcher ends watchLinger after the
// last one left (or at Close) and lets go of the file watch.
func (db *DB) removeWaiter() {
	db.lmu.Lock()
	db.waiters--
	last := db.waiters == 0
	db.lmu.Unlock()
	if last {
		select {
		case db.idle <- struct{}{}:
		default:
		}
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

// watch is the watcher goroutine: it ends watchLinger after no feed
// waits any more, or when the database closes.
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
	// The first answers are the baselines; the feed's state at that point
	// is read too, for a commit made before the watcher started.
	vs := versions{writer: -1, watcher: -1}
	var trail, linger *time.Timer
	var trailC, lingerC <-chan time.Time
	step := len(trailing)
	defer func() {
		for _, t := range []*time.Timer{trail, linger} {
			if t != nil {
				t.Stop()
			}
		}
	}()
	check := true
	var checked time.Time
	for {
		db.lmu.Lock()
		if db.closed {
			db.watching = false
			db.lmu.Unlock()
			return
		}
		idle := db.waiters == 0
		db.lmu.Unlock()
		switch {
		case !idle:
			lingerC = nil
		case lingerC == nil:
			if linger == nil {
				linger = time.NewTimer(watchLinger)
			} else {
				linger.Reset(watchLinger)
			}
			lingerC = linger.C
		}
		if check {
			db.watchChecks.Add(1)
			if moved, err := vs.changed(ctx, db); err == nil && moved {
				if seq, err := db.maxSeq(ctx); err == nil {
					db.noteSeq(seq)
				}
			}
			checked = time.Now()
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
		}
		check = true
		select {
		case <-tick:
		case <-trailC:
		case <-db.wake:
			step = 0
		case <-db.idle:
			check = false // start the linger; nothing was written
			continue
		case <-lingerC:
			lingerC = nil
			db.lmu.Lock()
			if db.waiters == 0 {
				db.watching = false
				db.lmu.Unlock()
				return
			}
			db.lmu.Unlock()
			check = false // a feed came back: nothing was written meanwhile
			continue
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

// versions are the last answers of PRAGMA data_version on the writer's
// connection and on the watcher's; -1 before the first.
type versions struct{ writer, watcher int64 }

// changed reports whether another connection may have committed since
// the last check. It asks the writer's connection when that is free:
// there the value moves only for other connections' commits, so the file
// events of this process's own writes (what wakes the watcher most)
// cost no read of the feed's head. The events of a commit arrive while
// it syncs the log, so it waits a little for the writer; should the
// writer stay busy (a long batch, or a wait for another process's write
// lock) it asks the watcher's connection, where every commit moves it.
// Each connection is compared with its own last answer (the values of two
// connections are unrelated): a commit after a connection's last answer
// shows on it.
func (v *versions) changed(ctx context.Context, db *DB) (bool, error) {
	last, conn := &v.watcher, db.watcher
	if db.lockWriterBriefly() {
		defer db.wmu.Unlock()
		last, conn = &v.writer, db.writer.DB
	}
	var n int64
	if err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&n); err != nil {
		return false, err
	}
	moved := n != *last
	*last = n
	return moved, nil
}

// writerWait bounds how long a check waits for the writer.
const writerWait = 20 * time.Millisecond

// lockWriterBriefly takes the writer's lock if it is free within
// writerWait.
func (db *DB) lockWriterBriefly() bool {
	deadline := time.Now().Add(writerWait)
	for {
		if db.wmu.TryLock() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
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
	db.headReads.Add(1)
	var seq sql.NullInt64
	err := db.watcher.QueryRowContext(ctx, "SELECT MAX(seq) FROM docs").Scan(&seq)
	return seq.Int64, err
}
