package localdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/settee/settee/couchdoc"
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
	page := s.PageSize
	if page <= 0 {
		page = 100
	}
	return db.readTx(ctx, func(tx *sql.Tx) error {
		var ixID int64
		r := db.newRtx(ctx, tx)
		if s.DDoc != "" || s.Name != "" {
			set, err := db.currentSet(ctx, tx, r.stmt(qIndexGen))
			if err != nil {
				return err
			}
			ix := set.find(s.DDoc, s.Name)
			if ix == nil {
				return couchdoc.Errorf(couchdoc.ErrNotFound, "index %s/%s not found", s.DDoc, s.Name)
			}
			ixID = ix.id
		}
		cursor, inclusive := s.Start, true
		if s.Descending {
			cursor, inclusive = s.End, false
		}
		if s.After != nil {
			cursor, inclusive = s.After, false
		}
		for {
			rows, err := scanPage(r, ixID, s, cursor, inclusive, page)
			if err != nil {
				return err
			}
			for _, row := range rows {
				if row.hasAtts {
					if err := r.fillAtts(row.doc, row.revRow, nil, 0, GetOptions{}); err != nil {
						return err
					}
				}
				more, err := fn(&IndexRow{Key: row.key, Doc: row.doc})
				if err != nil || !more {
					return err
				}
			}
			if len(rows) < page {
				return nil
			}
			cursor, inclusive = rows[len(rows)-1].key, false
			page = min(page*2, 1000)
		}
	})
}

type scanRow struct {
	key     []byte
	doc     *couchdoc.Doc
	revRow  int64
	hasAtts bool
}

// scanPage reads up to n rows from cursor on (nil: the range's end).
func scanPage(r *rtx, ixID int64, s IndexScan, cursor []byte, inclusive bool, n int) ([]scanRow, error) {
	keyCol := "e.key"
	q := `SELECT e.key, d.id, d.winner, b.rev_row, b.body, b.has_atts FROM mango_entries e
		JOIN docs d ON d.doc_id = e.doc_id JOIN revs b ON b.doc_id = d.doc_id AND b.rev = d.winner
		WHERE e.ix_id = ?`
	args := []any{ixID}
	if s.DDoc == "" && s.Name == "" {
		keyCol = "d.id"
		q = `SELECT d.id, d.id, d.winner, b.rev_row, b.body, b.has_atts FROM docs d
			JOIN revs b ON b.doc_id = d.doc_id AND b.rev = d.winner WHERE d.deleted = 0`
		args = nil
	}
	bound := func(op string, k []byte) {
		if k == nil {
			return
		}
		q += " AND " + keyCol + " " + op + " ?"
		if ixID == 0 {
			args = append(args, string(k)) // ids are TEXT, compared by bytes
		} else {
			args = append(args, k)
		}
	}
	if s.Descending {
		bound(">=", s.Start)
		if inclusive {
			bound("<=", cursor)
		} else {
			bound("<", cursor)
		}
		q += " ORDER BY " + keyCol + " DESC LIMIT ?"
	} else {
		if inclusive {
			bound(">=", cursor)
		} else {
			bound(">", cursor)
		}
		bound("<", s.End)
		q += " ORDER BY " + keyCol + " LIMIT ?"
	}
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
		if err := rows.Scan(&row.key, &doc.ID, &doc.Rev, &row.revRow, &doc.Body, &row.hasAtts); err != nil {
			return nil, err
		}
		row.doc = doc
		out = append(out, row)
	}
	return out, rows.Err()
}
