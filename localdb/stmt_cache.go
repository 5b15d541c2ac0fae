package localdb

import (
	"context"
	"database/sql"
	"errors"

	gosync "sync"
)

// stmtCache holds the read pool's statements for query texts built at run
// time from a small, finite set of shapes (an index scan's bounds and
// direction). Compiling such a statement costs about as much as running
// it on a page of 20 rows, so each shape is prepared once per store.
type stmtCache struct {
	mu gosync.Mutex
	m  map[string]*sql.Stmt
}

// get returns the statement for q, prepared on pool on first use.
func (c *stmtCache) get(ctx context.Context, pool interface {
	PrepareContext(context.Context, string) (*sql.Stmt, error)
}, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[q]; ok {
		return s, nil
	}
	s, err := pool.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[q] = s
	return s, nil
}

func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, s := range c.m {
		errs = append(errs, s.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}

// shapeStmt returns the pool's statement for q (see stmtCache), bound to
// the transaction.
func (r *rtx) shapeStmt(q string) (*sql.Stmt, error) {
	if s, ok := r.bound[q]; ok {
		return s, nil
	}
	ps, err := r.pool.shapes.get(r.ctx, r.pool.conns, q)
	if err != nil {
		return nil, err
	}
	if r.bound == nil {
		r.bound = make(map[string]*sql.Stmt)
	}
	s := r.tx.StmtContext(r.ctx, ps)
	r.bound[q] = s
	return s, nil
}
