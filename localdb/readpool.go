package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"
)

// readPool is a pool of read-only connections with readQueries prepared on
// it. A store has two. Replication, feeds and document reads use reads,
// which reads the file with pread: those walk most of the file, and pages
// they map would count in the process's RSS for as long as it runs.
// Mango queries use queries, whose connections map the file (mmap_size):
// a query touches a few random pages, and taking them from the mapping
// instead of one pread system call each made an indexed 20-row query
// about a quarter faster (BenchmarkFind).
type readPool struct {
	conns  *sqlx.DB
	stmts  map[string]*sql.Stmt // readQueries
	shapes stmtCache            // index scans' statements
	wrap   func(error) error    // DB.authErr
}

// queryMmapSize bounds the queries pool's mapping. It should cover the
// whole file (a replicated store's revisions lie among its attachments'
// chunks): SQLite's own maximum (SQLITE_MAX_MMAP_SIZE, 2 GiB less 64 KiB)
// on 64-bit platforms; 256 MiB on 32-bit ones, which can spare no more
// address space. Pages past it are read as usual.
func queryMmapSize() int64 {
	if strconv.IntSize == 32 {
		return 256 << 20
	}
	return 0x7fff0000
}

// openReadPool opens n read-only connections to path, with extra DSN
// pragmas.
func openReadPool(ctx context.Context, path string, n int, extra string) (*readPool, error) {
	conns, err := sqlx.Open("sqlite", dsn(path, "&_pragma=query_only(1)"+extra))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	conns.SetMaxOpenConns(n)
	conns.SetMaxIdleConns(n)
	p := &readPool{conns: conns, stmts: make(map[string]*sql.Stmt, len(readQueries))}
	for _, q := range readQueries {
		s, err := conns.PrepareContext(ctx, q)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("open %s: prepare %q: %w", path, q, err)
		}
		p.stmts[q] = s
	}
	return p, nil
}

func (p *readPool) close() error {
	if p == nil {
		return nil
	}
	var errs []error
	for _, s := range p.stmts {
		errs = append(errs, s.Close())
	}
	errs = append(errs, p.shapes.close(), p.conns.Close())
	return errors.Join(errs...)
}

// tx runs fn in a read transaction of the pool.
func (p *readPool) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := p.conns.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	err = fn(tx)
	if p.wrap != nil {
		err = p.wrap(err)
	}
	return err
}
