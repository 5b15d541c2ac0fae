package localdb

import (
	"context"
	"fmt"

	"github.com/settee/settee/couchdoc"
)

// AllDocsOffset counts the live documents that sort before key in
// _all_docs' order (after it when descending): CouchDB's "offset" of a
// range that starts at key.
func (db *DB) AllDocsOffset(ctx context.Context, key string, descending bool) (int64, error) {
	op := "<"
	if descending {
		op = ">"
	}
	return db.count(ctx, "SELECT COUNT(*) FROM docs WHERE deleted = 0 AND id "+op+" ?", key)
}

// DesignDocCount counts the live design documents (_design_docs'
// total_rows).
func (db *DB) DesignDocCount(ctx context.Context) (int64, error) {
	return db.count(ctx, "SELECT COUNT(*) FROM docs WHERE deleted = 0 AND id >= '_design/' AND id < '_design0'")
}

func (db *DB) count(ctx context.Context, q string, args ...any) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	var n int64
	if err := db.reads.conns.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count documents: %w", err)
	}
	return n, nil
}

// LocalDocs calls fn with every local document in id order (ids with
// their "_local/" prefix), bodies included: CouchDB's _local_docs.
func (db *DB) LocalDocs(ctx context.Context, fn func(*couchdoc.Doc) error) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	rows, err := db.reads.conns.QueryxContext(ctx, "SELECT id, rev, body FROM local_docs ORDER BY id")
	if err != nil {
		return fmt.Errorf("list local documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var row localRow
		if err := rows.StructScan(&row); err != nil {
			return fmt.Errorf("list local documents: %w", err)
		}
		if err := fn(row.doc()); err != nil {
			return err
		}
	}
	return rows.Err()
}
