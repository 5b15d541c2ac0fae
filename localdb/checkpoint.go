package localdb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	gosync "sync"
)

// The WAL checkpointer.
//
// SQLite's auto-checkpoint runs inside the commit that takes the WAL past
// 1,000 pages: that commit copies the WAL back into the database file and
// fsyncs it before it returns, so the one writer (and a pull waiting on it)
// stalls. The writer connection has auto-checkpoint off instead, and after
// each commit it reads how far the WAL goes and how much of it was copied
// back (walState):
//
//   - past walSoftBytes not yet copied, it wakes a goroutine that runs
//     PASSIVE checkpoints on a connection of its own, beside the writer (a
//     PASSIVE checkpoint takes no lock a writer or reader waits for);
//   - past walHardBytes of WAL, it runs a PASSIVE checkpoint itself before
//     its call returns (as SQLite's auto-checkpoint would, but with most
//     of the copying done already), so that the next transaction restarts
//     the WAL from its beginning: its growth stays bounded.
//
// Under a steady burst of writes the next transaction usually begins
// before the background copy of the last commit ends, so the WAL restarts
// when the writer finishes the copy at walHardBytes: it cycles up to that
// bound while the background does most of the copying. journal_size_limit
// keeps the file at that size between cycles, so SQLite overwrites it
// instead of growing and cutting it each time: BenchmarkWALCheckpoints
// shows the writer's time per pull batch and the process's CPU below the
// inline auto-checkpoint's, and cutting the file back at every restart
// losing most of that.
//
// Crash safety is SQLite's: a checkpoint only copies committed frames,
// each already synced at commit (synchronous=FULL), and a checkpoint cut
// short is redone from the WAL at the next open. Several processes may
// open the file: each has its own checkpointer, SQLite lets one checkpoint
// run at a time (the others return at once, busy), and every writer keeps
// the bound for its own commits.
const (
	walSoftBytes  = 4 << 20  // SQLite's default threshold, 1,000 pages of 4 KB
	walHardBytes  = 32 << 20 // the writer checkpoints itself past this
	walLimitBytes = walHardBytes + 1<<20
)

// checkpointer runs the background checkpoints of one DB.
type checkpointer struct {
	walPath, shmPath string
	soft, hard       int64
	conn             *sql.DB       // one connection, its own
	kick             chan struct{} // wakes the loop; holds one wake-up
	mu               gosync.Mutex  // one checkpoint at a time in this process
	stop             context.CancelFunc
	done             chan struct{} // closed when the loop has returned
	// paused keeps the loop from checkpointing (tests of the hard bound).
	paused bool

	shm *os.File // the wal-index, read by the writer only (under wmu)
}

// startCheckpointer opens the checkpointer's connection and starts its
// loop; stopCheckpointer ends both.
func (db *DB) startCheckpointer() error {
	conn, err := sql.Open("sqlite", dsn(db.path, db.vfsParam()+"&_pragma=cache_size(-256)"))
	if err != nil {
		return fmt.Errorf("open checkpointer: %w", err)
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	conn.SetConnMaxLifetime(0)
	conn.SetConnMaxIdleTime(0)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{walPath: db.path + "-wal", shmPath: db.path + "-shm", soft: walSoftBytes, hard: walHardBytes,
		conn: conn, kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	db.ckpt = c
	go c.loop(ctx)
	if _, pending := c.walState(); pending >= c.soft {
		c.wake() // a WAL left by the last run, or by init's migrations
	}
	return nil
}

// stopCheckpointer stops the loop, waits for it, and closes its
// connection. It leaves the WAL as it is: closing the last connection
// checkpoints it, as before.
func (db *DB) stopCheckpointer() error {
	c := db.ckpt
	if c == nil {
		return nil
	}
	c.stop()
	<-c.done
	if c.shm != nil {
		c.shm.Close()
	}
	return c.conn.Close()
}

func (c *checkpointer) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		c.mu.Lock()
		if !c.paused {
			// A failed checkpoint loses nothing (the frames stay in the
			// WAL); the next commit past the threshold wakes us again.
			_, _ = c.conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		}
		c.mu.Unlock()
	}
}

// walState returns the WAL's length and the part of it not yet copied
// back, in bytes of pages. It reads them from the wal-index header that
// SQLite keeps in the -shm file (https://www.sqlite.org/walformat.html:
// mxFrame at offset 16, the page size at 14, nBackfill at 96, in native
// byte order), without a lock: a torn read only wakes the checkpointer or
// checkpoints once for nothing. Without a -shm file it falls back to the
// -wal file's size for both.
func (c *checkpointer) walState() (length, pending int64) {
	var h [100]byte
	if c.shm == nil {
		c.shm, _ = os.Open(c.shmPath)
	}
	if c.shm != nil {
		if n, _ := c.shm.ReadAt(h[:], 0); n == len(h) {
			page := int64(binary.NativeEndian.Uint16(h[14:]))
			if page == 1 {
				page = 65536 // stored as 1, as in the WAL header
			}
			mx := int64(binary.NativeEndian.Uint32(h[16:]))
			backfill := int64(binary.NativeEndian.Uint32(h[96:]))
			return mx * page, max(mx-backfill, 0) * page
		}
	}
	fi, err := os.Stat(c.walPath)
	if err != nil {
		return 0, 0
	}
	return fi.Size(), fi.Size()
}

// afterCommit keeps the WAL in bounds after a commit of the writer
// (callers hold db.wmu, so the writer connection is idle).
func (db *DB) afterCommit(ctx context.Context) {
	c := db.ckpt
	if c == nil {
		return
	}
	length, pending := c.walState()
	switch {
	case length >= c.hard:
		// Wait for a background checkpoint in progress, then finish the
		// copy here: the next transaction can restart the WAL. The commit
		// is durable already, so an error here is not the caller's.
		c.mu.Lock()
		_, _ = db.writer.ExecContext(context.WithoutCancel(ctx), "PRAGMA wal_checkpoint(PASSIVE)")
		c.mu.Unlock()
	case pending >= c.soft:
		c.wake()
	}
}
