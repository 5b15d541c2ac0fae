package localdb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/indexstore"
)

// IndexScan is a key range of one index, read in key order.
type IndexScan struct {
	// DDoc and Name name a json index; both empty scan the _all_docs index,
	// whose keys are the document ids' bytes (design documents included).
	DDoc, Name string
	// Start (inclusive) and End (exclusive) bound the stored keys; nil is
	// unbounded. A json index's keys are mango.EncodeKey of the fields'
	// values, 00, the document id.
	Start, End []byte
	// After, when set, resumes strictly after this key (before it when
	// Descending): a bookmark.
	After []byte
	// Descending reads from End down to Start.
	Descending bool
	// PageSize is how many rows each query reads ahead (default 100): the
	// expected number of rows the caller needs, at most.
	PageSize int
	// Skip, on an ascending scan of a json index that starts at it (Start
	// equal to Skip, no After), is a key prefix whose rows are passed over
	// unread: a $gt's excluded value, whose rows the caller would refuse
	// anyway. Skipped, when set, receives their document ids (read from
	// the keys alone) before the first row is given.
	Skip    []byte
	Skipped func(ids []string)
}

// IndexRow is one row of a scan: its stored key and the document's
// winning revision (attachments as stubs).
type IndexRow struct {
	Key []byte
	Doc *couchdoc.Doc
}

// ScanIndex calls fn for each row of the range, in one read snapshot,
// until fn returns false or an error (which ScanIndex returns). An unknown
// index is ErrNotFound. Rows are read a page at a time, so a scan that
// stops early reads little more than it used.
func (db *DB) ScanIndex(ctx context.Context, s IndexScan, fn func(*IndexRow) (bool, error)) error {
	return db.ScanChosen(ctx, func([]*mango.Index) (*IndexScan, error) { return &s, nil }, fn)
}

// ScanChosen is ScanIndex of the range choose picks from the json indexes
// the read snapshot has (nil: no scan): a query planner sees the indexes
// of the snapshot it reads. choose is called again, before any row is
// given, when the indexes it was first given were not the snapshot's
// (another handle changed them; see setCheck).
func (db *DB) ScanChosen(ctx context.Context, choose func([]*mango.Index) (*IndexScan, error), fn func(*IndexRow) (bool, error)) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.queries.tx(ctx, func(tx *sql.Tx) error {
		r := &rtx{ctx: ctx, db: db, pool: db.queries, tx: tx}
		c := &setCheck{r: r, set: db.ixs.Load()}
		if c.set == nil {
			if _, err := c.stale(nil); err != nil {
				return err
			}
		}
		for {
			retry, err := scanChosen(r, c, choose, fn)
			if !retry {
				return err
			}
		}
	})
}

// setCheck is the index set a scan plans with: the one this process last
// saw, until checked against the read snapshot's. The first page's query
// reads the snapshot's generation beside its rows (a statement less per
// query); a set that turns out not to be the snapshot's is read from it,
// and the plan made again, before any row is given.
type setCheck struct {
	r        *rtx
	set      *indexstore.Set
	verified bool
}

// stale checks the set once, against gen when a query read it, and
// reports whether it was not the snapshot's (set is then the snapshot's).
func (c *setCheck) stale(gen *int64) (bool, error) {
	if c.verified {
		return false, nil
	}
	c.verified = true
	if gen != nil && c.set != nil && *gen == c.set.Gen() {
		return false, nil
	}
	cur, err := c.r.db.ixs.Current(c.r.ctx, c.r.tx, c.r.stmt(indexstore.GenQuery))
	if err != nil {
		return false, err
	}
	stale := c.set == nil || cur.Gen() != c.set.Gen()
	c.set = cur
	return stale, nil
}

// scanChosen plans with c's set and scans; retry is set when the set was
// stale, before any row was given.
func scanChosen(r *rtx, c *setCheck, choose func([]*mango.Index) (*IndexScan, error), fn func(*IndexRow) (bool, error)) (retry bool, err error) {
	s, err := choose(c.set.Defs())
	var ix *indexstore.Index
	if err == nil && s != nil && (s.DDoc != "" || s.Name != "") {
		if ix = c.set.Find(s.DDoc, s.Name); ix == nil {
			err = couchdoc.Errorf(couchdoc.ErrNotFound, "index %s/%s not found", s.DDoc, s.Name)
		}
	}
	if err != nil || s == nil {
		// An answer without rows is the snapshot's only if the set is.
		if stale, serr := c.stale(nil); stale || serr != nil {
			return serr == nil, serr
		}
		return false, err
	}
	var ixID int64
	var fields int
	if ix != nil {
		ixID, fields = ix.ID, len(ix.Def.Fields)
	}
	page := s.PageSize
	if page <= 0 {
		page = 100
	}
	cursor, inclusive := s.Start, true
	if s.Descending {
		cursor, inclusive = s.End, false
	}
	if s.After != nil {
		cursor, inclusive = s.After, false
	}
	var skipped []string
	if ix != nil && !s.Descending && s.After == nil && s.Skip != nil && bytes.Equal(s.Start, s.Skip) {
		past := append(slices.Clip(s.Skip), mango.KeyMax) // above every key with the prefix
		if skipped, err = skipKeys(r, ixID, fields, s.Skip, past, s.End); err != nil {
			return false, err
		}
		cursor, inclusive = past, true
		if s.End != nil && bytes.Compare(s.End, past) < 0 {
			cursor = s.End
		}
	}
	for {
		var gen *int64
		if !c.verified {
			gen = new(int64)
		}
		rows, err := scanPage(r, ixID, fields, *s, cursor, inclusive, page, gen)
		if err != nil {
			// A stale set may name an index whose id the file has given to
			// another since, with keys of another shape.
			if stale, serr := c.stale(nil); stale && serr == nil {
				return true, nil
			}
			return false, err
		}
		if len(rows) == 0 {
			gen = nil // no row read it
		}
		if stale, err := c.stale(gen); stale || err != nil {
			return err == nil, err
		}
		if skipped != nil && s.Skipped != nil {
			s.Skipped(skipped)
		}
		skipped = nil
		for _, row := range rows {
			if row.hasAtts {
				if err := r.fillAtts(row.doc, row.revRow, nil, 0, GetOptions{}); err != nil {
					return false, err
				}
			}
			more, err := fn(&IndexRow{Key: row.key, Doc: row.doc})
			if err != nil || !more {
				return false, err
			}
		}
		if len(rows) < page {
			return false, nil
		}
		cursor, inclusive = rows[len(rows)-1].key, false
		page = min(page*2, 1000)
	}
}

// skipKeys returns the document ids of index ixID's entries from start up
// to past (and end), read from the keys alone.
func skipKeys(r *rtx, ixID int64, fields int, start, past, end []byte) ([]string, error) {
	if end != nil && bytes.Compare(end, past) < 0 {
		past = end
	}
	branch := func(table string) string {
		return `SELECT key FROM ` + table + ` WHERE ix_id = ? AND key >= ? AND key < ?`
	}
	stmt, err := r.shapeStmt(branch(indexstore.TableEntries) + " UNION ALL " + branch(indexstore.TableFresh))
	if err != nil {
		return nil, fmt.Errorf("scan index: %w", err)
	}
	rows, err := stmt.QueryContext(r.ctx, ixID, start, past, ixID, start, past)
	if err != nil {
		return nil, fmt.Errorf("scan index: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	var key []byte
	for rows.Next() {
		if err := rows.Scan(&key); err != nil {
			return nil, err
		}
		id, err := entryID(key, fields, ixID)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

type scanRow struct {
	key     []byte
	doc     *couchdoc.Doc
	revRow  int64
	hasAtts bool
}

// scanPage reads up to n rows from cursor on (nil: the range's end) of
// index ixID, whose keys encode fields values before the id.
// When gen is not nil, each row also reads the snapshot's index generation
// into it.
func scanPage(r *rtx, ixID int64, fields int, s IndexScan, cursor []byte, inclusive bool, n int, gen *int64) ([]scanRow, error) {
	genCol := ""
	if gen != nil {
		genCol = ", (" + indexstore.GenQuery[len("SELECT "):] + ")"
	}
	allDocs := s.DDoc == "" && s.Name == ""
	keyCol := "e.key"
	if allDocs {
		keyCol = "d.id"
	}
	var where string
	var args []any
	bound := func(op string, k []byte) {
		if k == nil {
			return
		}
		where += " AND " + keyCol + " " + op + " ?"
		if allDocs {
			args = append(args, string(k)) // ids are TEXT, compared by bytes
		} else {
			args = append(args, k)
		}
	}
	dir := ""
	if s.Descending {
		bound(">=", s.Start)
		if inclusive {
			bound("<=", cursor)
		} else {
			bound("<", cursor)
		}
		dir = " DESC"
	} else {
		if inclusive {
			bound(">=", cursor)
		} else {
			bound(">", cursor)
		}
		bound("<", s.End)
	}
	var q string
	if allDocs {
		q = `SELECT d.id, d.winner, b.rev_row, b.body, b.has_atts` + genCol + ` FROM docs d
			JOIN revs b ON b.doc_id = d.doc_id AND b.rev = d.winner WHERE d.deleted = 0` + where + " ORDER BY d.id" + dir
	} else {
		// The entries are in two B-trees (see indexstore): SQLite merges
		// the two ranges in key order, each read along its index.
		branch := func(table string) string {
			return `SELECT e.key, b.rev, b.rev_row, b.body, b.has_atts` + genCol + ` FROM ` + table + ` e
			JOIN revs b ON b.rev_row = e.rev_row WHERE e.ix_id = ?` + where
		}
		q = branch(indexstore.TableEntries) + " UNION ALL " + branch(indexstore.TableFresh) + " ORDER BY 1" + dir
		args = append(append([]any{ixID}, args...), append([]any{ixID}, args...)...)
	}
	q += " LIMIT ?"
	args = append(args, n)
	stmt, err := r.shapeStmt(q)
	if err != nil {
		return nil, fmt.Errorf("scan index: %w", err)
	}
	rows, err := stmt.QueryContext(r.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("scan index: %w", err)
	}
	defer rows.Close()
	var out []scanRow
	for rows.Next() {
		var row scanRow
		doc := &couchdoc.Doc{}
		dest := []any{&row.key, &doc.Rev, &row.revRow, &doc.Body, &row.hasAtts}
		if gen != nil {
			dest = append(dest, gen)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		id, err := entryID(row.key, fields, ixID)
		if err != nil {
			return nil, err
		}
		doc.ID = id
		row.doc = doc
		out = append(out, row)
	}
	return out, rows.Err()
}

// entryID is the document id at the tail of an entry's key: after the
// fields' encodings and a 00 byte. The _all_docs index (ixID 0) keys by id.
func entryID(key []byte, fields int, ixID int64) (string, error) {
	if ixID == 0 {
		return string(key), nil
	}
	i := 0
	for f := 0; f < fields; f++ {
		n, ok := mango.KeyLen(key[i:])
		if !ok {
			return "", fmt.Errorf("index %d: malformed entry key %x", ixID, key)
		}
		i += n
	}
	if i >= len(key) || key[i] != 0 {
		return "", fmt.Errorf("index %d: malformed entry key %x", ixID, key)
	}
	return string(key[i+1:]), nil
}
