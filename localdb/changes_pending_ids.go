package localdb

import (
	"context"
	"strings"
)

// PendingChangesOf counts, among the documents ids names, those whose
// latest change comes after seq: what a changes feed filtered by doc_ids
// that stopped at seq leaves for the next one. An id listed twice counts
// once; no ids counts nothing. It reads the id index only.
func (db *DB) PendingChangesOf(ctx context.Context, seq int64, ids []string) (int64, error) {
	seen := make(map[string]bool, len(ids))
	uniq := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	var total int64
	for len(uniq) > 0 {
		n := min(500, len(uniq))
		args := make([]any, 0, n+1)
		args = append(args, seq)
		for _, id := range uniq[:n] {
			args = append(args, id)
		}
		c, err := db.count(ctx, "SELECT COUNT(*) FROM docs WHERE seq > ? AND id IN (?"+strings.Repeat(",?", n-1)+")", args...)
		if err != nil {
			return 0, err
		}
		total += c
		uniq = uniq[n:]
	}
	return total, nil
}
