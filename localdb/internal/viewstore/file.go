package viewstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"

	_ "modernc.org/sqlite" // the SQLite driver
)

// ErrOtherSignature: the file holds another signature's rows.
var ErrOtherSignature = errors.New("view file holds another signature")

const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rows (
	view  INTEGER NOT NULL,
	key   BLOB NOT NULL,
	docid TEXT NOT NULL,
	n     INTEGER NOT NULL,
	kjson TEXT NOT NULL,
	value TEXT NOT NULL,
	PRIMARY KEY (view, key, docid, n)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rows_by_doc ON rows (docid);
CREATE TABLE IF NOT EXISTS chunks (
	view   INTEGER NOT NULL,
	lo_key BLOB NOT NULL,
	lo_id  TEXT NOT NULL,
	lo_n   INTEGER NOT NULL,
	count  INTEGER NOT NULL,
	first  BLOB,
	last   BLOB,
	numeric INTEGER NOT NULL,
	sum    REAL NOT NULL,
	min    REAL NOT NULL,
	max    REAL NOT NULL,
	sumsq  REAL NOT NULL,
	PRIMARY KEY (view, lo_key, lo_id, lo_n)
) WITHOUT ROWID;
`

// File is one signature's view file.
type File struct {
	db   *sql.DB
	path string
	// stmts are the prepared queries, by text: preparing costs a short
	// query as much as running it.
	mu    gosync.Mutex
	stmts map[string]*sql.Stmt
	reds  reductions // guarded by mu
}

// stmt returns the prepared statement of query q.
func (f *File) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.stmts[q]; s != nil {
		return s, nil
	}
	s, err := f.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if f.stmts == nil {
		f.stmts = map[string]*sql.Stmt{}
	}
	f.stmts[q] = s
	return s, nil
}

func (f *File) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s, err := f.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// queryRow is QueryRowContext with a prepared statement; a failed
// preparation comes back from Scan.
func (f *File) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	s, err := f.stmt(ctx, q)
	if err != nil {
		return errRow{err}
	}
	return s.QueryRowContext(ctx, args...)
}

type rowScanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

func (e errRow) Scan(...any) error { return e.err }

// Open opens (creating it when missing) the view file of signature sig at
// path; ErrOtherSignature when the file belongs to another signature.
// params are added to its DSN (an encrypted store's VFS: see
// localdb.DB.SideFileDSN).
func Open(ctx context.Context, path, sig, params string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("view directory: %w", err)
	}
	p := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	db, err := sql.Open("sqlite", "file:"+p+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"+params)
	if err != nil {
		return nil, err
	}
	// One connection: the file has one updater at a time and reads are
	// short; it also keeps the connection's cache warm between batches.
	db.SetMaxOpenConns(1)
	f := &File{db: db, path: path}
	if err := f.init(ctx, sig); err != nil {
		db.Close()
		return nil, err
	}
	return f, nil
}

func (f *File) init(ctx context.Context, sig string) error {
	if _, err := f.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("view schema: %w", err)
	}
	var have string
	err := f.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'signature'").Scan(&have)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		_, err = f.db.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('signature', ?), ('update_seq', 0), ('chunks_seq', 0)", sig)
		return err
	case err != nil:
		return err
	case have != sig:
		return fmt.Errorf("%s: %w", f.path, ErrOtherSignature)
	}
	return f.checkChunks(ctx)
}

// checkChunks rebuilds the chunks of a file whose chunks do not reflect
// its rows' sequence.
func (f *File) checkChunks(ctx context.Context) error {
	const current = "SELECT COALESCE((SELECT value FROM meta WHERE key = 'chunks_seq') = (SELECT value FROM meta WHERE key = 'update_seq'), 0)"
	// Read first: the transaction below takes the file's write lock.
	var same bool
	if err := f.db.QueryRowContext(ctx, current).Scan(&same); err != nil || same {
		return err
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, current).Scan(&same); err != nil || same {
		return err
	}
	if err := rebuildChunks(ctx, tx); err != nil {
		return fmt.Errorf("rebuild view chunks: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO meta (key, value) VALUES ('chunks_seq', (SELECT value FROM meta WHERE key = 'update_seq'))"); err != nil {
		return err
	}
	return tx.Commit()
}

// Close closes the file.
func (f *File) Close() error {
	f.mu.Lock()
	for _, s := range f.stmts {
		s.Close()
	}
	f.stmts = nil
	f.mu.Unlock()
	return f.db.Close()
}

// Seq returns the store sequence the rows reflect.
func (f *File) Seq(ctx context.Context) (int64, error) {
	var seq int64
	err := f.queryRow(ctx, "SELECT value FROM meta WHERE key = 'update_seq'").Scan(&seq)
	return seq, err
}

// Size returns the file's size in bytes (with its WAL).
func (f *File) Size() int64 {
	var n int64
	for _, p := range []string{f.path, f.path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// Batch is one update transaction.
type Batch struct {
	ctx      context.Context
	tx       *sql.Tx
	chunks   map[int]*viewChunks
	del, ins *sql.Stmt
	// rows is how many rows each view gained (or lost) in the batch.
	rows map[int]int64
	// f and from: the file and its sequence when the batch began (for
	// its cached reductions); changed, the chunks the batch changed.
	f       *File
	from    int64
	changed []string
}

// Begin starts an update transaction.
func (f *File) Begin(ctx context.Context) (*Batch, error) {
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	b := &Batch{ctx: ctx, tx: tx, rows: map[int]int64{}, chunks: map[int]*viewChunks{}, f: f}
	err = tx.QueryRowContext(ctx, "SELECT COALESCE((SELECT value FROM meta WHERE key = 'update_seq'), 0)").Scan(&b.from)
	if err == nil {
		b.del, err = tx.PrepareContext(ctx, "DELETE FROM rows WHERE docid = ? RETURNING view, key, n")
	}
	if err == nil {
		b.ins, err = tx.PrepareContext(ctx, "INSERT OR REPLACE INTO rows (view, key, docid, n, kjson, value) VALUES (?, ?, ?, ?, ?, ?)")
	}
	if err != nil {
		tx.Rollback()
		return nil, err
	}
	return b, nil
}

// RemoveDoc removes every row document id emitted and calls touched with
// the view of each.
func (b *Batch) RemoveDoc(id string, touched func(view int)) error {
	rows, err := b.del.Query(id)
	if err != nil {
		return err
	}
	var gone []pos
	var views []int
	for rows.Next() {
		p := pos{id: id}
		var v int
		if err := rows.Scan(&v, &p.key, &p.n); err != nil {
			rows.Close()
			return err
		}
		gone, views = append(gone, p), append(views, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i, p := range gone {
		v := views[i]
		vc, err := b.chunksOf(v)
		if err != nil {
			return err
		}
		c := vc.find(p)
		c.count--
		c.dirty, c.changed = true, true
		b.rows[v]--
		touched(v)
	}
	return nil
}

// Add adds one row: the n-th row document id emitted in view, its key
// (encoded and as JSON) and value (JSON).
func (b *Batch) Add(view int, key []byte, id string, n int, keyJSON, value []byte) error {
	vc, err := b.chunksOf(view)
	if err != nil {
		return err
	}
	if _, err := b.ins.Exec(view, key, id, n, keyJSON, value); err != nil {
		return err
	}
	b.rows[view]++
	vc.find(pos{key: key, id: id, n: int64(n)}).addRow(key, value)
	return nil
}

// Commit records seq as the sequence the rows reflect, and for each view
// of viewSeqs the last sequence that changed its rows, and commits.
func (b *Batch) Commit(seq int64, viewSeqs map[int]int64) error {
	if err := b.saveChunks(); err != nil {
		b.tx.Rollback()
		return err
	}
	if _, err := b.tx.Exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('update_seq', ?), ('chunks_seq', ?)", seq, seq); err != nil {
		b.tx.Rollback()
		return err
	}
	for v, n := range b.rows {
		if _, err := b.tx.Exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = value + excluded.value", viewRowsKey(v), n); err != nil {
			b.tx.Rollback()
			return err
		}
	}
	for v, s := range viewSeqs {
		if _, err := b.tx.Exec("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", viewSeqKey(v), s); err != nil {
			b.tx.Rollback()
			return err
		}
	}
	if err := b.tx.Commit(); err != nil {
		return err
	}
	b.f.forget(b.from, seq, b.changed)
	return nil
}

func viewSeqKey(view int) string { return "view_seq:" + strconv.Itoa(view) }

func viewRowsKey(view int) string { return "view_rows:" + strconv.Itoa(view) }

// Rows returns how many rows view holds, kept in the file's meta table
// (a count of the B-tree would read every row).
func (f *File) Rows(ctx context.Context, view int) (int64, error) {
	var n int64
	err := f.queryRow(ctx, "SELECT COALESCE((SELECT value FROM meta WHERE key = ?), 0)", viewRowsKey(view)).Scan(&n)
	return n, err
}

// ViewSeq returns the last store sequence that changed the rows of view
// (CouchDB's update_seq of a view): 0 when none did.
func (f *File) ViewSeq(ctx context.Context, view int) (int64, error) {
	var seq int64
	err := f.queryRow(ctx, "SELECT COALESCE((SELECT value FROM meta WHERE key = ?), 0)", viewSeqKey(view)).Scan(&seq)
	return seq, err
}

// Rollback abandons the batch.
func (b *Batch) Rollback() { b.tx.Rollback() }
