package localdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/indexstore"
)

// checkIndexes verifies the json indexes against the documents: the
// indexes are those of the live design documents, and each index holds
// exactly the entries its definition gives for the live documents, each
// naming the row of its document's winner.
func (db *DB) checkIndexes(ctx context.Context, tx *sql.Tx) ([]error, error) {
	var errs []error
	type live struct {
		revRow   int64
		id, rev  string
		body     []byte
		isDesign bool
	}
	rows, err := tx.QueryContext(ctx, `SELECT r.rev_row, d.id, d.winner, r.body FROM docs d
		JOIN revs r ON r.doc_id = d.doc_id AND r.rev = d.winner WHERE d.deleted = 0`)
	if err != nil {
		return nil, err
	}
	var docs []live
	for rows.Next() {
		var l live
		if err := rows.Scan(&l.revRow, &l.id, &l.rev, &l.body); err != nil {
			rows.Close()
			return nil, err
		}
		l.isDesign = mango.IsDesignID(l.id)
		docs = append(docs, l)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	want := map[string]*mango.Index{}
	for _, d := range docs {
		if d.isDesign {
			for _, ix := range mango.IndexesFromDesign(d.id, d.body) {
				want[ix.DDoc+"\x00"+ix.Name] = ix
			}
		}
	}
	stored := map[string]int64{}
	irows, err := tx.QueryContext(ctx, "SELECT ix_id, ddoc, name FROM mango_indexes")
	if err != nil {
		return nil, err
	}
	for irows.Next() {
		var id int64
		var ddoc, name string
		if err := irows.Scan(&id, &ddoc, &name); err != nil {
			irows.Close()
			return nil, err
		}
		stored[ddoc+"\x00"+name] = id
	}
	irows.Close()
	for k := range want {
		if _, ok := stored[k]; !ok {
			errs = append(errs, fmt.Errorf("index %q of a design doc is not stored", k))
		}
	}
	for k := range stored {
		if _, ok := want[k]; !ok {
			errs = append(errs, fmt.Errorf("stored index %q has no design doc", k))
		}
	}
	set := db.ixs.Load()
	for k, ixID := range stored {
		ix := want[k]
		if ix == nil {
			continue
		}
		if cur := set.Find(ix.DDoc, ix.Name); cur == nil || cur.ID != ixID {
			errs = append(errs, fmt.Errorf("index %q: in-memory set disagrees with the file", k))
		}
		expect := map[string]int64{}
		for _, d := range docs {
			if d.isDesign {
				continue
			}
			doc, err := mango.DecodeDoc(d.id, d.rev, d.body, nil)
			if err != nil {
				continue
			}
			if key, ok := indexstore.EntryKey(nil, ix, doc, d.id); ok {
				expect[string(key)] = d.revRow
			}
		}
		erows, err := tx.QueryContext(ctx, "SELECT key, rev_row FROM mango_entries WHERE ix_id = ?1 UNION ALL SELECT key, rev_row FROM mango_fresh WHERE ix_id = ?1", ixID)
		if err != nil {
			return nil, err
		}
		n := 0
		for erows.Next() {
			var key []byte
			var revRow int64
			if err := erows.Scan(&key, &revRow); err != nil {
				erows.Close()
				return nil, err
			}
			n++
			if got, ok := expect[string(key)]; !ok || got != revRow {
				errs = append(errs, fmt.Errorf("index %q: stray entry %x for revision row %d", k, key, revRow))
			}
		}
		erows.Close()
		if n != len(expect) {
			errs = append(errs, fmt.Errorf("index %q: %d entries, want %d", k, n, len(expect)))
		}
	}
	var orphans int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT ix_id FROM mango_entries UNION ALL SELECT ix_id FROM mango_fresh) e
		LEFT JOIN mango_indexes i ON i.ix_id = e.ix_id WHERE i.ix_id IS NULL`).Scan(&orphans); err != nil {
		return nil, err
	}
	if orphans > 0 {
		errs = append(errs, fmt.Errorf("%d index entries of no index", orphans))
	}
	return errs, nil
}
