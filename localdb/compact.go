package localdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/settee/settee/localdb/revtree"
)

// Compact stems every document to the current revs limit, drops the bodies
// of revisions that are not leaves and the attachment content no revision
// references any more, in small write transactions so other writers are
// not held up for long, then returns the free pages to the operating
// system (the file shrinks; a reader holding an old snapshot may delay
// that to the next Compact). The revision trees (ids and history) are
// kept.
func (db *DB) Compact(ctx context.Context) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	cursor := int64(0)
	for {
		var n int
		err := db.update(ctx, func(w *wtx) error {
			rows, err := w.tx.QueryContext(ctx, "SELECT doc_id, tree FROM docs WHERE doc_id > ? ORDER BY doc_id LIMIT ?", cursor, changesPage)
			if err != nil {
				return err
			}
			type item struct {
				docID int64
				tree  []byte
			}
			var items []item
			for rows.Next() {
				var it item
				if err := rows.Scan(&it.docID, &it.tree); err != nil {
					rows.Close()
					return err
				}
				items = append(items, it)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			n = len(items)
			for _, it := range items {
				cursor = it.docID
				t, err := revtree.Unmarshal(it.tree)
				if err != nil {
					return fmt.Errorf("compact doc %d: %w", it.docID, err)
				}
				if removed := t.Stem(db.RevsLimit()); removed != nil {
					// A lowered revs limit applies here too, as in CouchDB's
					// compaction; the winner and the feed do not change.
					if _, err := w.tx.ExecContext(ctx, "UPDATE docs SET tree = ? WHERE doc_id = ?", t.Marshal(), it.docID); err != nil {
						return err
					}
				}
				have, err := storedRevs(ctx, w.tx, it.docID)
				if err != nil {
					return err
				}
				leaves := make(map[string]bool)
				for _, l := range t.Leaves() {
					leaves[t.Nodes[l].Rev.String()] = true
				}
				for r := range have {
					if !leaves[r] {
						if _, err := w.Exec(qDeleteRev, it.docID, r); err != nil {
							return err
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("compact: %w", err)
		}
		if n < changesPage {
			break
		}
	}
	err := db.update(ctx, func(w *wtx) error {
		if _, err := w.tx.ExecContext(ctx, "DELETE FROM att_content WHERE digest NOT IN (SELECT digest FROM rev_atts)"); err != nil {
			return err
		}
		// Kept downloads of content no longer lacking (attach_partial.go).
		if err := w.dropStalePartials(); err != nil {
			return err
		}
		// Chunks of no content, except those of uploads in flight (taken
		// while holding the writer, so no staged chunk can slip in) and of
		// kept downloads.
		q := "DELETE FROM att_chunks WHERE digest NOT IN (SELECT COALESCE(chunks, digest) FROM att_content) AND digest NOT IN (SELECT key FROM att_partial)"
		keys := db.stagingKeys()
		if len(keys) > 0 {
			q += " AND digest NOT IN (?" + strings.Repeat(", ?", len(keys)-1) + ")"
		}
		_, err := w.tx.ExecContext(ctx, q, keys...)
		return err
	})
	if err != nil {
		return fmt.Errorf("compact attachments: %w", err)
	}
	// Move the free pages to the end of the file and cut them off
	// (auto_vacuum=INCREMENTAL), then copy the WAL into the file, which
	// shrinks it, and empty the WAL.
	db.wmu.Lock()
	defer db.wmu.Unlock()
	if _, err := db.writer.ExecContext(ctx, "PRAGMA incremental_vacuum"); err != nil {
		return fmt.Errorf("compact: incremental vacuum: %w", err)
	}
	// Not beside a background checkpoint, which would make this one busy.
	db.ckpt.mu.Lock()
	defer db.ckpt.mu.Unlock()
	if _, err := db.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("compact: checkpoint: %w", err)
	}
	return nil
}

// CompactPolicy says when CompactIfNeeded compacts: when the free pages
// pass both bounds. The zero value compacts whenever a page is free.
type CompactPolicy struct {
	// MinFreeBytes is the least free space worth a compaction.
	MinFreeBytes int64
	// MinFreeRatio is the least share of the file (0 to 1) that is free.
	MinFreeRatio float64
}

// CompactIfNeeded runs Compact when the policy's threshold is passed and
// reports whether it did. The caller picks the moment, best when no
// replication is running, as a long compaction
// would otherwise slow the replication's writes.
func (db *DB) CompactIfNeeded(ctx context.Context, p CompactPolicy) (bool, error) {
	s, err := db.Sizes(ctx)
	if err != nil {
		return false, err
	}
	free := s.File - s.Active
	if free <= 0 || free < p.MinFreeBytes || float64(free) < p.MinFreeRatio*float64(s.File) {
		return false, nil
	}
	return true, db.Compact(ctx)
}
