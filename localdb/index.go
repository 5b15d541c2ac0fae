package localdb

import (
	"context"
	"fmt"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/indexstore"
)

// Mango json indexes are stored by package localdb/internal/indexstore
// (its doc says how): document writes drive its Writer (docWriter.index),
// queries read its tables (index_read.go), and db.ixs caches the set.

// Indexes returns the store's json indexes, sorted by design document then
// name, as the file has them now (indexes created by another process
// included). The _all_docs special index is not among them.
func (db *DB) Indexes() []*mango.Index {
	s := db.ixs.Load()
	if err := db.enter(); err == nil {
		if cur, err := db.ixs.Current(context.Background(), db.reads.conns, db.reads.stmts[indexstore.GenQuery]); err == nil {
			s = cur
		}
		db.leave()
	}
	return s.Defs()
}

// loadIndexes reads the index set, after rebuilding every index if the
// file's key encoding is not ours (or it predates indexes).
func (db *DB) loadIndexes(ctx context.Context) error {
	var version string
	err := db.writer.QueryRowContext(ctx, "SELECT COALESCE((SELECT value FROM meta WHERE key = 'mango_key_version'), '')").Scan(&version)
	if err != nil {
		return fmt.Errorf("read index version: %w", err)
	}
	if version != indexstore.KeyVersion {
		return db.writeDocs(ctx, attWriter{}, func(w *docWriter) error { return w.index.Rebuild() })
	}
	_, err = db.ixs.Current(ctx, db.writer, nil)
	return err
}
