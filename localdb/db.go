package localdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // the SQLite driver

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/cryptvfs"
	"github.com/settee/settee/localdb/internal/indexstore"
)

// DefaultRevsLimit is CouchDB's default _revs_limit.
const DefaultRevsLimit = 1000

// DB is an open database file.
type DB struct {
	path    string
	openKey string // storeKey(path), counted in openStores while open
	uuid    string
	seeds   []string // UUIDs of the stores this one was cloned from
	writer  *sqlx.DB // one connection, BEGIN IMMEDIATE
	// reads serves reads; queries serves Mango queries (see readPool).
	reads, queries *readPool

	wmu   gosync.Mutex // serialises write transactions and the stmt cache
	stmts map[string]*sql.Stmt

	revsLimit atomic.Int64
	// designGen counts the commits of this handle that wrote or purged a
	// design document (DesignGeneration).
	designGen atomic.Int64
	// writeCheck is the app's check of every document write (SetWriteCheck).
	writeCheck checkSlot
	updateSeq  atomic.Int64
	ixs        indexstore.Cache // the json indexes this handle saw last

	smu     gosync.Mutex
	staging map[string]bool // temporary chunk keys of uploads in flight
	// downloads holds the content digests being downloaded (attach_partial.go),
	// each closed when its download ends.
	downloads map[string]chan struct{}

	nmu    gosync.Mutex
	notify chan struct{} // closed and replaced on every commit that changes the feed

	kick      chan struct{}      // wakes the expiry sweeper
	stopSweep context.CancelFunc // ends the sweeper (Close)
	sweeps    gosync.WaitGroup

	lmu      gosync.Mutex
	closed   bool
	closing  chan struct{}    // closed when Close begins
	active   gosync.WaitGroup // calls in flight
	subs     gosync.WaitGroup // the commit watcher, the listeners' follower
	waiters  int              // feeds waiting for a change (changes_watch.go)
	watching bool             // the commit watcher runs
	watcher  *sql.DB          // one connection, for PRAGMA data_version
	wake     chan struct{}    // wakes the commit watcher for a file event
	idle     chan struct{}    // tells the commit watcher the last waiter left

	key          string    // the file, as fileKey names it (files.go)
	watchMode    WatchMode // how feeds hear of other processes' commits
	pollInterval time.Duration
	watchChecks  atomic.Int64 // the watcher's PRAGMA data_version checks
	watchStarts  atomic.Int64 // the watcher goroutines started
	headReads    atomic.Int64 // the watcher's reads of the feed's head

	ckpt *checkpointer // background WAL checkpoints (checkpoint.go)

	vfs *cryptvfs.VFS // an encrypted store's VFS (crypt.go); nil when plain

	pendingMemo pendingMemo // PendingChanges' last answers

	listen listeners // AddChangeListener's (changes_listeners.go)
}

func dsn(path string, extra string) string {
	return fileURI(path) + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)" + extra
}

// fileURI is path as a file: URI, without parameters.
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Open opens the Settee store at path, creating it (with a new UUID) if
// the file does not exist or is empty, unless opts.NoCreate, and brings
// its schema up to date. It refuses, with an *OpenError and without
// changing the file, a path it cannot use (a missing directory, a
// directory, no permission), another program's file (ErrNotStore) and a
// store written by a newer Settee (ErrNewerStore). It purges the documents
// that expired while the file was closed (SetExpiration) and starts the
// goroutine that purges the others as they expire; Close stops it.
func Open(path string, opts *Options) (*DB, error) {
	// Counted from the start, so that Remove never deletes a file being
	// opened.
	key := storeKey(path)
	noteOpen(key, 1)
	db, err := openDB(path, opts)
	if err != nil {
		noteOpen(key, -1)
		return nil, err
	}
	db.openKey = key
	return db, nil
}

func openDB(path string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	exists, err := checkPath(path, opts.NoCreate)
	if err != nil {
		return nil, err
	}
	if opts.Watch < WatchNotify || opts.Watch > WatchLocal {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "localdb: unknown watch mode %d", opts.Watch)
	}
	vfs, err := openVFS(path, exists, opts)
	if err != nil {
		return nil, err
	}
	db, err := openSQL(path, opts, vfs)
	if err != nil && vfs != nil {
		vfs.Close()
	}
	return db, err
}

func openSQL(path string, opts *Options, vfs *cryptvfs.VFS) (*DB, error) {
	vp := ""
	if vfs != nil {
		vp = "&vfs=" + vfs.Name()
	}
	readConns := opts.ReadConns
	if readConns <= 0 {
		readConns = 4
	}
	// The writer never checkpoints inside a commit (checkpoint.go). Its
	// temporary files are in memory: above all the statement journal of
	// the savepoint around each document with attachment bytes, which
	// SQLite otherwise spills to a temporary file past 64 KB (two pwrites
	// per page saved; BenchmarkReplicatedAttachments shows the cost). The
	// writer runs no query that needs a large temporary table.
	w, err := sqlx.Open("sqlite", dsn(path, vp+fmt.Sprintf("&_txlock=immediate&_pragma=wal_autocheckpoint(0)&_pragma=journal_size_limit(%d)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-%d)", walLimitBytes, writerCacheKiB)))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	db := &DB{path: path, writer: w, stmts: make(map[string]*sql.Stmt), notify: make(chan struct{}),
		closing: make(chan struct{}), staging: make(map[string]bool), kick: make(chan struct{}, 1),
		wake: make(chan struct{}, 1), idle: make(chan struct{}, 1), key: fileKey(path), watchMode: opts.Watch, pollInterval: opts.PollInterval,
		vfs: vfs}
	if db.pollInterval <= 0 {
		db.pollInterval = DefaultPollInterval
	}
	ctx := context.Background()
	if err := db.init(ctx, opts); err != nil {
		w.Close()
		err = db.authErr(err)
		var oe *OpenError
		if errors.As(err, &oe) {
			return nil, err
		}
		return nil, &OpenError{path, err.Error(), err}
	}
	// The watcher's connection opens on first use (a followed feed).
	wc, err := sql.Open("sqlite", dsn(path, vp+"&_pragma=query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wc.SetMaxOpenConns(1)
	wc.SetMaxIdleConns(1)
	wc.SetConnMaxLifetime(0)
	wc.SetConnMaxIdleTime(0)
	db.watcher = wc
	readExtra := vp
	if vfs != nil {
		readExtra += fmt.Sprintf("&_pragma=cache_size(-%d)", encryptedReadCacheKiB)
	}
	if db.reads, err = openReadPool(ctx, path, readConns, readExtra); err == nil {
		db.reads.wrap = db.authErr
		db.queries, err = openReadPool(ctx, path, readConns, readExtra+fmt.Sprintf("&_pragma=mmap_size(%d)", queryMmapSize()))
	}
	if err == nil {
		db.queries.wrap = db.authErr
	}
	if err != nil {
		db.reads.close()
		wc.Close()
		w.Close()
		return nil, err
	}
	if err := db.startCheckpointer(); err != nil {
		db.reads.close()
		db.queries.close()
		wc.Close()
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// Documents that expired while the store was closed go first (a read
	// finds whether any did, so a store without them takes no write lock).
	next, err := db.nextExpiry(ctx)
	if err == nil && !next.IsZero() && !next.After(time.Now()) {
		_, err = db.PurgeExpired(ctx, time.Now())
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	db.stopSweep = cancel
	db.sweeps.Add(1)
	go db.sweeper(sctx)
	files.add(db)
	return db, nil
}

// pageSize is the page size of a new store (a store keeps the size it was
// made with). SQLite writes each page to the WAL in two system calls
// (frame header, page), and a checkpoint reads it back and writes it
// again. A pull moves 1-KB bodies and attachment chunks spread over
// overflow pages, so pages twice SQLite's default 4 KiB halve those calls
// and lower a pull's CPU (BenchmarkWALCheckpoints/background,
// BenchmarkReplicatedAttachments, the bench's 100k pull), while random ids
// (BenchmarkBulkDocsRandomIDs) and a single Put are as fast. The writer's
// cache is then writerCacheKiB, so that the process's peak RSS stays where
// it was (every connection's cache holds larger pages). Larger pages saved
// no more and raised the pull's peak RSS. The cost: an empty store is
// larger (a page or more per table and index).
const pageSize = 8192

// writerCacheKiB is the writer's page cache (SQLite's default is 2,000
// KiB): with 8-KiB pages, a pull's peak RSS is no higher than with 4-KiB
// pages and the default cache, at the same speed for random ids (the
// bench's 100k pull, BenchmarkBulkDocsRandomIDs).
const writerCacheKiB = 1000

// encryptedReadCacheKiB is the page cache of each reading connection of
// an encrypted store (twice SQLite's default): a page read from an
// encrypted file is authenticated and decrypted on every read that misses
// the cache, where a plain store's pages come from the system's cache for
// one pread each or from its mapping (BenchmarkEncryption/get, /find).
const encryptedReadCacheKiB = 4096

func (db *DB) init(ctx context.Context, opts *Options) error {
	fresh, err := checkOwner(ctx, db.writer.DB, db.path, opts.NoCreate)
	if err != nil {
		return err
	}
	if fresh {
		if _, err := db.writer.ExecContext(ctx, "PRAGMA page_size = "+strconv.Itoa(pageSize)); err != nil {
			return fmt.Errorf("set page_size: %w", err)
		}
	}
	vacuum, err := db.setAutoVacuum(ctx)
	if err != nil {
		return err
	}
	var mode string
	if err := db.writer.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return fmt.Errorf("set WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	if err := migrate(ctx, db.writer.DB); err != nil {
		return err
	}
	if vacuum {
		// A file made before auto_vacuum was set: one VACUUM rewrites it so
		// Compact can give free pages back from now on.
		if _, err := db.writer.ExecContext(ctx, "VACUUM"); err != nil {
			return fmt.Errorf("vacuum to enable auto_vacuum: %w", err)
		}
	}
	for _, q := range writeQueries {
		s, err := db.writer.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		db.stmts[q] = s
	}
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key='uuid'").Scan(&db.uuid)
	if errors.Is(err, sql.ErrNoRows) {
		db.uuid = newUUID()
		_, err = tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('uuid', ?)", db.uuid)
	}
	if err != nil {
		return fmt.Errorf("read uuid: %w", err)
	}
	if db.seeds, err = readSeeds(ctx, tx); err != nil {
		return fmt.Errorf("read seeds: %w", err)
	}
	var limit string
	err = tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key='revs_limit'").Scan(&limit)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		n := opts.RevsLimit
		if n <= 0 {
			n = DefaultRevsLimit
		}
		db.revsLimit.Store(int64(n))
		_, err = tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('revs_limit', ?)", strconv.Itoa(n))
	case err == nil:
		n, perr := strconv.Atoi(limit)
		if perr != nil || n <= 0 {
			return fmt.Errorf("bad revs_limit %q in file", limit)
		}
		db.revsLimit.Store(int64(n))
		if opts.RevsLimit > 0 && opts.RevsLimit != n {
			db.revsLimit.Store(int64(opts.RevsLimit))
			_, err = tx.ExecContext(ctx, "UPDATE meta SET value=? WHERE key='revs_limit'", strconv.Itoa(opts.RevsLimit))
		}
	}
	if err != nil {
		return fmt.Errorf("read revs_limit: %w", err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, sqlUpdateSeq).Scan(&seq); err != nil {
		return err
	}
	db.updateSeq.Store(seq)
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.loadIndexes(ctx)
}

// setAutoVacuum makes the file incremental-vacuum capable (so Compact can
// shrink it): set before the first table of a new file, or, for an older
// file, it reports that a VACUUM must follow.
func (db *DB) setAutoVacuum(ctx context.Context) (needVacuum bool, err error) {
	var av, tables int
	if err := db.writer.QueryRowContext(ctx, "PRAGMA auto_vacuum").Scan(&av); err != nil {
		return false, fmt.Errorf("read auto_vacuum: %w", err)
	}
	if av == 2 {
		return false, nil
	}
	if err := db.writer.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return false, fmt.Errorf("read schema: %w", err)
	}
	if _, err := db.writer.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return false, fmt.Errorf("set auto_vacuum: %w", err)
	}
	return tables > 0, nil
}

func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return fmt.Sprintf("%x", b[:])
}

// readTx runs fn in a read transaction (one consistent snapshot).
func (db *DB) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.readTxIn(ctx, fn)
}

// readTxIn is readTx for callers already inside enter/leave.
func (db *DB) readTxIn(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.reads.tx(ctx, fn)
}

// enter registers a call in flight; it fails once Close has begun.
func (db *DB) enter() error {
	db.lmu.Lock()
	defer db.lmu.Unlock()
	if db.closed {
		return ErrClosed
	}
	db.active.Add(1)
	return nil
}

func (db *DB) leave() { db.active.Done() }

// Close waits for the calls in flight, then closes the file. Later calls
// return ErrClosed. Closing twice is a no-op.
func (db *DB) Close() error {
	db.lmu.Lock()
	if db.closed {
		db.lmu.Unlock()
		return nil
	}
	db.closed = true
	close(db.closing)
	db.lmu.Unlock()
	if db.stopSweep != nil {
		db.stopSweep()
		db.sweeps.Wait()
	}
	db.active.Wait()
	db.broadcast() // wake the feeds' waits so they see the close
	db.subs.Wait()
	files.remove(db)
	var errs []error
	db.wmu.Lock()
	for _, s := range db.stmts {
		errs = append(errs, s.Close())
	}
	db.stmts = nil
	db.wmu.Unlock()
	errs = append(errs, db.stopCheckpointer())
	errs = append(errs, db.reads.close(), db.queries.close(), db.watcher.Close(), db.writer.Close())
	if db.vfs != nil {
		errs = append(errs, db.vfs.Close())
	}
	if db.openKey != "" {
		noteOpen(db.openKey, -1)
	}
	return errors.Join(errs...)
}

// UUID returns the database's persistent unique id, made when the file was
// created.
func (db *DB) UUID() string { return db.uuid }

// Path returns the file's path as given to Open.
func (db *DB) Path() string { return db.path }

// RevsLimit returns how many revisions of history a document keeps.
func (db *DB) RevsLimit() int { return int(db.revsLimit.Load()) }

// SetRevsLimit changes and persists the revs limit; documents are stemmed to
// it on their next write or by Compact, as in CouchDB. n must be positive.
func (db *DB) SetRevsLimit(ctx context.Context, n int) error {
	if n <= 0 {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "revs_limit must be a positive integer")
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.update(ctx, func(w *wtx) error {
		if _, err := w.Exec(qSetRevsLimit, strconv.Itoa(n)); err != nil {
			return err
		}
		if err := w.bumpSeq(); err != nil { // as CouchDB's set_revs_limit
			return err
		}
		db.revsLimit.Store(int64(n))
		return nil
	})
}

// Info returns the document counts, update sequence and UUID.
func (db *DB) Info(ctx context.Context) (*Info, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	info := &Info{UUID: db.uuid}
	err := db.reads.conns.GetContext(ctx, info, `SELECT
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_count') AS doc_count,
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_del_count') AS doc_del_count,
		(`+sqlUpdateSeq+`) AS update_seq,
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purge_seq') AS purge_seq`)
	if err != nil {
		return nil, fmt.Errorf("info: %w", err)
	}
	return info, nil
}

// DesignGeneration changes whenever a write through this handle commits a
// change of a design document (written, deleted or purged), so that what
// is derived from design documents (validation functions) can be cached
// until it changes. Writes by other processes on the same file are not
// seen.
func (db *DB) DesignGeneration() int64 { return db.designGen.Load() }
