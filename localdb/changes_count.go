package localdb

import (
	"context"
	"fmt"
)

// PendingChanges counts the documents whose latest change comes after
// seq: what a changes feed that stopped at seq leaves for the next one
// (CouchDB's "pending"). It reads the seq index only.
func (db *DB) PendingChanges(ctx context.Context, seq int64) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	var n int64
	if err := db.reader.QueryRowContext(ctx, "SELECT COUNT(*) FROM docs WHERE seq > ?", seq).Scan(&n); err != nil {
		return 0, fmt.Errorf("count pending changes: %w", err)
	}
	return n, nil
}
