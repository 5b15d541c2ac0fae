package localdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/settee/settee/localdb/revtree"
)

// Sizes are a store's sizes as CouchDB's GET /{db} reports them (in its
// order).
type Sizes struct {
	// File is the database file's size in bytes (the WAL not counted).
	File int64 `json:"file"`
	// External is the data as the application sees it: the bytes of the
	// stored revision bodies and of the attachment content.
	External int64 `json:"external"`
	// Active is the part of the file in use: File less the free pages.
	Active int64 `json:"active"`
}

// Stats is a store's detailed account of its space and contents.
type Stats struct {
	Sizes
	// Bytes of file pages, by what they hold: document bodies (revs),
	// revision metadata (docs: ids, trees, winners), attachments (content,
	// chunks and their per-revision lists), indexes, free pages, and the
	// rest (meta, _local docs, purge records, the schema, auto-vacuum
	// pointer maps).
	BodyBytes, RevMetaBytes, AttachmentBytes, IndexBytes, FreeBytes, OtherBytes int64
	// Counts: live documents, tombstoned documents (Tombstones), revision
	// ids in all trees, leaves, documents with conflicts, and stored
	// attachment contents.
	Docs, Tombstones, Revisions, Leaves, Conflicts, Attachments int64
	// NotDownloaded counts the attachment contents known by their
	// metadata only (lazy attachments, evicted bodies), NotDownloadedBytes
	// their length: what fetching them all would add.
	NotDownloaded, NotDownloadedBytes int64
	// PartialDownloads counts the interrupted downloads the store keeps to
	// resume (DownloadAttachment), PartialBytes the bytes they hold
	// (already in AttachmentBytes' pages): what a resumed fetch need not
	// download again.
	PartialDownloads, PartialBytes int64
}

// Sizes returns the file, active and external sizes: page counts and a
// total the store keeps up to date, so it is cheap.
func (db *DB) Sizes(ctx context.Context) (*Sizes, error) {
	var s Sizes
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return sizesIn(ctx, tx, &s)
	})
	if err != nil {
		return nil, fmt.Errorf("sizes: %w", err)
	}
	return &s, nil
}

func sizesIn(ctx context.Context, tx *sql.Tx, s *Sizes) error {
	var pages, free, size int64
	err := tx.QueryRowContext(ctx, `SELECT
		(SELECT page_count FROM pragma_page_count),
		(SELECT freelist_count FROM pragma_freelist_count),
		(SELECT page_size FROM pragma_page_size),
		(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'external_bytes')`).Scan(&pages, &free, &size, &s.External)
	if err != nil {
		return err
	}
	s.File = pages * size
	s.Active = (pages - free) * size
	return nil
}

// Stats reads every page's owner (SQLite's dbstat) and every revision
// tree: it costs a pass over the whole file, for tools and diagnostics
// (GET /{db} uses Sizes).
func (db *DB) Stats(ctx context.Context) (*Stats, error) {
	var st Stats
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		if err := sizesIn(ctx, tx, &st.Sizes); err != nil {
			return err
		}
		st.FreeBytes = st.File - st.Active
		if err := st.pageBytes(ctx, tx); err != nil {
			return err
		}
		// Pages dbstat does not list (pointer maps) are the rest's too.
		st.OtherBytes += st.Active - st.BodyBytes - st.RevMetaBytes - st.AttachmentBytes - st.IndexBytes - st.OtherBytes
		return st.counts(ctx, tx)
	})
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return &st, nil
}

func (st *Stats) pageBytes(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.name, COALESCE(m.type, 'table'), SUM(s.pgsize)
		FROM dbstat s LEFT JOIN sqlite_schema m ON m.name = s.name GROUP BY s.name`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var n int64
		if err := rows.Scan(&name, &typ, &n); err != nil {
			return err
		}
		switch {
		case typ == "index" || strings.HasPrefix(name, "sqlite_autoindex_"):
			st.IndexBytes += n
		case name == "revs":
			st.BodyBytes += n
		case name == "docs":
			st.RevMetaBytes += n
		case name == "att_content" || name == "att_chunks" || name == "rev_atts":
			st.AttachmentBytes += n
		default:
			st.OtherBytes += n
		}
	}
	return rows.Err()
}

func (st *Stats) counts(ctx context.Context, tx *sql.Tx) error {
	err := tx.QueryRowContext(ctx, `SELECT
		(SELECT COALESCE(SUM(deleted = 0), 0) FROM docs),
		(SELECT COALESCE(SUM(deleted = 1), 0) FROM docs),
		(SELECT COALESCE(SUM(conflicted), 0) FROM docs),
		(SELECT COALESCE(SUM(present), 0) FROM att_content),
		(SELECT COUNT(*) FROM att_content WHERE present = 0),
		(SELECT COALESCE(SUM(length), 0) FROM att_content WHERE present = 0),
		(SELECT COUNT(*) FROM att_partial),
		(SELECT COALESCE(SUM(length), 0) FROM att_partial)`).Scan(&st.Docs, &st.Tombstones, &st.Conflicts, &st.Attachments,
		&st.NotDownloaded, &st.NotDownloadedBytes, &st.PartialDownloads, &st.PartialBytes)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, "SELECT tree FROM docs")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var enc []byte
		if err := rows.Scan(&enc); err != nil {
			return err
		}
		t, err := revtree.Unmarshal(enc)
		if err != nil {
			return err
		}
		st.Revisions += int64(len(t.Nodes))
		st.Leaves += int64(len(t.Leaves()))
	}
	return rows.Err()
}
