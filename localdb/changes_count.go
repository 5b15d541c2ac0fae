package localdb

import "context"

// PendingChanges counts the documents whose latest change comes after
// seq: what a changes feed that stopped at seq leaves for the next one
// (CouchDB's "pending"). It reads the seq index only.
func (db *DB) PendingChanges(ctx context.Context, seq int64) (int64, error) {
	return db.count(ctx, "SELECT COUNT(*) FROM docs WHERE seq > ?", seq)
}
