package main

import (
	"context"
	"database/sql"
	"net/url"
)

// salvageIDs lists the ids of a damaged store's documents straight from
// its file, read only, for when the store's own feed cannot be read: by
// the unique index on ids, else by a scan of the table that steps over
// what it cannot read. It returns the ids found and the first error met.
// The store's schema is read here only, and only to save what a damaged
// file still holds.
func salvageIDs(ctx context.Context, path string) ([]string, error) {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ids, ierr := pagedIDs(ctx, db, "SELECT id, id FROM docs INDEXED BY sqlite_autoindex_docs_1 WHERE id > ? ORDER BY id LIMIT 500", "")
	if ierr == nil {
		return ids, nil
	}
	var out []string
	var first error
	var from int64
	var max int64
	if err := db.QueryRowContext(ctx, "SELECT max(doc_id) FROM docs").Scan(&max); err != nil {
		max = from + 1<<20 // unknown: step a bounded way
	}
	for from <= max {
		var id string
		var docID int64
		err := db.QueryRowContext(ctx, "SELECT doc_id, id FROM docs WHERE doc_id >= ? ORDER BY doc_id LIMIT 1", from).Scan(&docID, &id)
		switch {
		case err == sql.ErrNoRows:
			return out, first
		case err != nil:
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				return out, first
			}
			from++
			continue
		}
		if docID < from {
			// A damaged page answered out of order: step on, never back.
			from++
			continue
		}
		out = append(out, id)
		from = docID + 1
	}
	return out, first
}

// pagedIDs runs q (two columns: the id and the key of the next page) page
// by page from start.
func pagedIDs(ctx context.Context, db *sql.DB, q string, start any) ([]string, error) {
	var out []string
	key := start
	for {
		rows, err := db.QueryContext(ctx, q, key)
		if err != nil {
			return out, err
		}
		n := 0
		for rows.Next() {
			var id string
			if err := rows.Scan(&id, &key); err != nil {
				rows.Close()
				return out, err
			}
			out = append(out, id)
			n++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return out, err
		}
		if n < 500 {
			return out, nil
		}
	}
}
