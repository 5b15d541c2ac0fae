package localdb

import (
	"context"
	"fmt"
)

// AllDocs lists documents by id as CouchDB's _all_docs, calling fn per row,
// and returns total_rows (the number of live documents). Deleted documents
// are left out, except when asked for by Keys: then a deleted one comes
// with Deleted set and its winning rev, and a missing one with Error
// "not_found". Local documents are never listed.
func (db *DB) AllDocs(ctx context.Context, opts AllDocsOptions, fn func(*AllDocsRow) error) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	var total int64
	if err := db.reads.conns.QueryRowContext(ctx, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_count'").Scan(&total); err != nil {
		return 0, fmt.Errorf("all_docs: %w", err)
	}
	if opts.Keys != nil {
		return total, db.allDocsKeys(ctx, opts, fn)
	}
	skip := opts.Skip
	sent := 0
	cursor, haveCursor := opts.StartKey, opts.StartKey != ""
	first := true
	for {
		var q string
		args := []any{}
		where := "d.deleted = 0"
		if haveCursor {
			op := map[bool]string{false: ">", true: "<"}[opts.Descending]
			if first {
				op += "="
			}
			where += " AND d.id " + op + " ?"
			args = append(args, cursor)
		}
		if opts.EndKey != "" {
			op := map[bool]string{false: "<", true: ">"}[opts.Descending]
			if !opts.ExclusiveEnd {
				op += "="
			}
			where += " AND d.id " + op + " ?"
			args = append(args, opts.EndKey)
		}
		order := "ASC"
		if opts.Descending {
			order = "DESC"
		}
		q = "SELECT " + feedCols + " WHERE " + where + " ORDER BY d.id " + order + " LIMIT ?"
		args = append(args, changesPage)
		page, err := db.feedPage(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		first = false
		for _, r := range page {
			cursor, haveCursor = r.id, true
			if skip > 0 {
				skip--
				continue
			}
			row, err := db.allDocsRow(ctx, r, opts)
			if err != nil {
				return 0, err
			}
			if err := fn(row); err != nil {
				return 0, err
			}
			sent++
			if opts.Limit > 0 && sent >= opts.Limit {
				return total, nil
			}
		}
		if len(page) < changesPage {
			return total, nil
		}
	}
}

func (db *DB) allDocsRow(ctx context.Context, r *feedRow, opts AllDocsOptions) (*AllDocsRow, error) {
	c, err := db.feedChange(ctx, r, ChangesOptions{IncludeDocs: opts.IncludeDocs, Conflicts: opts.Conflicts})
	if err != nil {
		return nil, err
	}
	row := &AllDocsRow{ID: r.id, Rev: c.Revs[0], Deleted: c.Deleted}
	if opts.IncludeDocs && !c.Deleted {
		row.Doc = c.Doc
	}
	return row, nil
}

func (db *DB) allDocsKeys(ctx context.Context, opts AllDocsOptions, fn func(*AllDocsRow) error) error {
	keys := opts.Keys
	if opts.Descending {
		keys = make([]string, len(opts.Keys))
		for i, k := range opts.Keys {
			keys[len(keys)-1-i] = k
		}
	}
	skip, sent := opts.Skip, 0
	for _, k := range keys {
		if skip > 0 {
			skip--
			continue
		}
		var row *AllDocsRow
		page, err := db.feedPage(ctx, "SELECT "+feedCols+" WHERE d.id = ?", k)
		if err != nil {
			return err
		}
		if len(page) == 0 {
			row = &AllDocsRow{ID: k, Error: "not_found"}
		} else if row, err = db.allDocsRow(ctx, page[0], opts); err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
		sent++
		if opts.Limit > 0 && sent >= opts.Limit {
			return nil
		}
	}
	return nil
}

// Conflicts calls fn with the id of every document whose winning revision
// has conflicts (other live leaves), in id order.
func (db *DB) Conflicts(ctx context.Context, fn func(id string) error) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	cursor := ""
	for {
		rows, err := db.reads.conns.QueryContext(ctx, "SELECT id FROM docs WHERE conflicted = 1 AND id > ? ORDER BY id LIMIT ?", cursor, changesPage)
		if err != nil {
			return err
		}
		ids, err := scanAll[string](rows)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := fn(id); err != nil {
				return err
			}
			cursor = id
		}
		if len(ids) < changesPage {
			return nil
		}
	}
}

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
