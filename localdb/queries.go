package localdb

import (
	"database/sql"
	"strings"

	"github.com/settee/settee/localdb/internal/attachstore"
	"github.com/settee/settee/localdb/internal/indexstore"
	"github.com/settee/settee/localdb/internal/multirow"
)

// The writer's statements, prepared once when the database opens (the
// writer has a single connection, so nothing can be prepared while a write
// transaction holds it).
const (
	qAddCount = "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = ?"
	// qDeleteChunks deletes the chunks stored under a staging or download
	// key, unless content kept them (att_content.chunks, attach_stage.go).
	qDeleteChunks = "DELETE FROM att_chunks WHERE digest = ?1 AND NOT EXISTS (SELECT 1 FROM att_content WHERE chunks = ?1)"
	// qDeleteContentChunks deletes the chunks of content digest.
	qDeleteContentChunks = "DELETE FROM att_chunks WHERE digest = (SELECT COALESCE(chunks, digest) FROM att_content WHERE digest = ?)"
	qDeleteLocal         = "DELETE FROM local_docs WHERE id = ?"
	qDeleteRev           = "DELETE FROM revs WHERE doc_id = ? AND rev = ?"
	qInsertAbsent        = "INSERT INTO att_content (digest, length, present) VALUES (?, ?, 0) ON CONFLICT DO NOTHING"
	qInsertDoc           = "INSERT INTO docs (doc_id, id, seq, winner, deleted, conflicted, tree) VALUES (?, ?, ?, ?, ?, ?, ?)"
	qInsertRev           = "INSERT INTO revs (rev_row, doc_id, rev, body, has_atts) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
	qInsertRevAtt        = "INSERT INTO rev_atts (rev_row, name, digest, content_type, length, revpos, missing, encoding) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	qLocalRev            = "SELECT rev FROM local_docs WHERE id = ?"
	qSetRevsLimit        = "UPDATE meta SET value=? WHERE key='revs_limit'"
	qUpdateDoc           = "UPDATE docs SET seq = ?, winner = ?, deleted = ?, conflicted = ?, tree = ? WHERE doc_id = ?"
	qUpsertLocal         = "INSERT INTO local_docs (id, rev, body) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET rev = excluded.rev, body = excluded.body"
	qRevAtts             = `SELECT r.rev, a.name, a.digest, a.content_type, a.length, a.revpos, a.encoding, c.present = 0
		FROM revs r JOIN rev_atts a ON a.rev_row = r.rev_row JOIN att_content c ON c.digest = a.digest WHERE r.doc_id = ?`
	qMaxSeq     = sqlUpdateSeq
	qMaxDocID   = "SELECT COALESCE(MAX(doc_id), 0) FROM docs"
	qMaxRevRow  = "SELECT COALESCE(MAX(rev_row), 0) FROM revs"
	qSavepoint  = "SAVEPOINT doc"
	qRollbackTo = "ROLLBACK TO doc"
	qRelease    = "RELEASE doc"
)

// sqlUpdateSeq reads the update sequence: the newest document's, or the
// floor a purge left (the sequence never goes back).
const sqlUpdateSeq = `SELECT MAX(COALESCE((SELECT MAX(seq) FROM docs), 0),
	COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'seq_floor'), 0))`

// writeSizes are the row counts of the multi-row INSERTs and the id counts
// of the preload queries prepared at Open: powers of two, so any count is
// written as a few of them (inserts) or padded to the next one (preload).
var writeSizes = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}

// preloadQuery reads the trees of n documents by id.
func preloadQuery(n int) string {
	return "SELECT id, doc_id, tree FROM docs WHERE id IN (?" + strings.Repeat(",?", n-1) + ")"
}

var writeQueries = []string{
	qAddCount,
	qDeleteChunks,
	qDeleteLocal,
	qDeleteRev,
	qInsertAbsent,
	qInsertDoc,
	qInsertRev,
	qInsertRevAtt,
	qLocalRev,
	qDeleteContentChunks,
	qSetRevsLimit,
	qUpdateDoc,
	qUpsertLocal,
	qRevAtts,
	qMaxSeq,
	qMaxDocID,
	qMaxRevRow,
	qSavepoint,
	qRollbackTo,
	qRelease,
}

func init() {
	for _, n := range writeSizes {
		if n <= multirow.Chunk {
			writeQueries = append(writeQueries, insertDocsQuery(n), insertRevsQuery(n))
		}
		if n <= preloadChunk {
			writeQueries = append(writeQueries, preloadQuery(n))
		}
	}
	writeQueries = append(writeQueries, qInsertDocsChunk, qInsertRevsChunk)
	writeQueries = append(writeQueries, indexstore.Queries(writeSizes)...)
	writeQueries = append(writeQueries, attachstore.WriteQueries...)
}

// The read pool's hot statements, prepared when the database opens (each
// pool connection prepares them once, on first use).
const (
	rLoadRow = "SELECT doc_id, seq, tree FROM docs WHERE id = ?"
	rBody    = "SELECT rev_row, body, has_atts FROM revs WHERE doc_id = ? AND rev = ?"
	rRevAtts = `SELECT a.name, a.digest, a.content_type, a.length, a.revpos, a.encoding, c.present = 0
		FROM rev_atts a JOIN att_content c ON c.digest = a.digest WHERE a.rev_row = ?`
)

// rLoadRows reads the rows of up to loadChunk documents (OpenRevsBatch);
// a shorter list is padded by repeating its last id.
var rLoadRows = "SELECT id, doc_id, seq, tree FROM docs WHERE id IN (?" + strings.Repeat(", ?", loadChunk-1) + ")"

// rBodies reads the bodies of up to loadChunk (doc_id, rev) pairs; unused
// pairs are doc_id 0 with an empty rev, which match nothing.
var rBodies = "WITH k(d, r) AS (VALUES (?, ?)" + strings.Repeat(", (?, ?)", loadChunk-1) + ") " +
	"SELECT revs.doc_id, revs.rev, revs.rev_row, revs.body, revs.has_atts FROM k JOIN revs ON revs.doc_id = k.d AND revs.rev = k.r"

var readQueries = append([]string{rLoadRow, rBody, rRevAtts, rLoadRows, rBodies, rFeedPage, rFeedPageDesc, indexstore.GenQuery},
	attachstore.ReadQueries...)

// scanAll reads a one-column result to the end and closes it: the ids a
// caller then works through without holding the query open.
func scanAll[T any](rows *sql.Rows) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
