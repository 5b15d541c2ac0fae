package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/settee/settee/localdb/internal/attachstore"
	"github.com/settee/settee/localdb/revtree"
)

// CheckInvariants verifies the store's structure, for tests: every tree
// decodes and is well formed, each document's stored winner, deleted and
// conflicted flags agree with its tree, the document counts are right, every leaf has a body and every
// body belongs to a revision of the tree, sequences are unique and not
// above the update sequence, purge records stay within their limit, the
// external byte total is right, every attachment's content is stored
// whole, and the json indexes hold exactly what their definitions give. It
// reads one snapshot.
func (db *DB) CheckInvariants(ctx context.Context) error {
	return db.readTx(ctx, func(tx *sql.Tx) error {
		docs, maxSeq, errs, err := checkTrees(ctx, tx)
		if err != nil {
			return err
		}
		for _, check := range []func() ([]error, error){
			func() ([]error, error) { return db.checkUpdateSeq(ctx, tx, maxSeq) },
			func() ([]error, error) { return checkBodies(ctx, tx, docs) },
			func() ([]error, error) { return checkAttachments(ctx, tx) },
			func() ([]error, error) { return checkCounters(ctx, tx) },
			func() ([]error, error) { return db.checkIndexes(ctx, tx) },
		} {
			found, err := check()
			if err != nil {
				return err
			}
			errs = append(errs, found...)
		}
		if errs != nil {
			return fmt.Errorf("localdb invariants: %w", errors.Join(errs...))
		}
		return nil
	})
}

// checkedDoc is a document's tree as checkTrees decoded it.
type checkedDoc struct {
	id   string
	tree *revtree.Tree
}

// checkTrees reads every document: its tree decodes and has leaves, its
// stored winner, deleted and conflicted flags agree with the tree, and no
// two documents share a sequence. It returns the decoded trees by doc_id
// and the highest sequence.
func checkTrees(ctx context.Context, tx *sql.Tx) (docs map[int64]checkedDoc, maxSeq int64, errs []error, err error) {
	rows, err := tx.QueryContext(ctx, "SELECT doc_id, id, seq, winner, deleted, conflicted, tree FROM docs")
	if err != nil {
		return nil, 0, nil, err
	}
	defer rows.Close()
	docs = make(map[int64]checkedDoc)
	seqs := make(map[int64]bool)
	for rows.Next() {
		var docID, seq int64
		var id, winner string
		var deleted, conflicted bool
		var enc []byte
		if err := rows.Scan(&docID, &id, &seq, &winner, &deleted, &conflicted, &enc); err != nil {
			return nil, 0, nil, err
		}
		if seqs[seq] {
			errs = append(errs, fmt.Errorf("seq %d used twice", seq))
		}
		seqs[seq] = true
		maxSeq = max(maxSeq, seq)
		t, err := revtree.Unmarshal(enc)
		if err != nil {
			errs = append(errs, fmt.Errorf("doc %q: %w", id, err))
			continue
		}
		docs[docID] = checkedDoc{id, t}
		leaves := t.Leaves()
		if len(leaves) == 0 {
			errs = append(errs, fmt.Errorf("doc %q: empty tree", id))
			continue
		}
		w := t.Nodes[leaves[0]]
		if w.Rev.String() != winner || w.Deleted != deleted {
			errs = append(errs, fmt.Errorf("doc %q: stored winner %s (deleted %v), tree says %s (deleted %v)", id, winner, deleted, w.Rev, w.Deleted))
		}
		c := false
		for _, l := range leaves[1:] {
			c = c || !t.Nodes[l].Deleted
		}
		if c != conflicted {
			errs = append(errs, fmt.Errorf("doc %q: conflicted flag %v, tree says %v", id, conflicted, c))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, nil, err
	}
	return docs, maxSeq, errs, nil
}

// checkUpdateSeq: the DB's update seq may lag commits made through
// another connection (a feed's watcher catches up); it is never ahead of
// the file's, which is never below the highest doc seq (it may be above:
// the floor a purge left).
func (db *DB) checkUpdateSeq(ctx context.Context, tx *sql.Tx, maxSeq int64) ([]error, error) {
	var errs []error
	var fileSeq int64
	if err := tx.QueryRowContext(ctx, sqlUpdateSeq).Scan(&fileSeq); err != nil {
		return nil, err
	}
	if fileSeq < maxSeq {
		errs = append(errs, fmt.Errorf("file update seq %d below max seq %d", fileSeq, maxSeq))
	}
	if s := db.updateSeq.Load(); s > fileSeq {
		errs = append(errs, fmt.Errorf("update seq %d above the file's %d", s, fileSeq))
	}
	return errs, nil
}

// checkBodies: each body belongs to a node of its document's tree; each
// leaf has one.
func checkBodies(ctx context.Context, tx *sql.Tx, docs map[int64]checkedDoc) ([]error, error) {
	var errs []error
	have := make(map[int64]map[string]bool)
	rows, err := tx.QueryContext(ctx, "SELECT doc_id, rev FROM revs")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var docID int64
		var rev string
		if err := rows.Scan(&docID, &rev); err != nil {
			return nil, err
		}
		d, ok := docs[docID]
		if !ok {
			errs = append(errs, fmt.Errorf("body %s of unknown doc %d", rev, docID))
			continue
		}
		r, err := revtree.ParseRev(rev)
		if err != nil || d.tree.Find(r) < 0 {
			errs = append(errs, fmt.Errorf("doc %q: body of %s, which is not in its tree", d.id, rev))
		}
		if have[docID] == nil {
			have[docID] = make(map[string]bool)
		}
		have[docID][rev] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for docID, d := range docs {
		for _, l := range d.tree.Leaves() {
			if !have[docID][d.tree.Nodes[l].Rev.String()] {
				errs = append(errs, fmt.Errorf("doc %q: leaf %s has no body", d.id, d.tree.Nodes[l].Rev))
			}
		}
	}
	return errs, nil
}

// countCheck is a rule checked by counting the rows that break it: the
// query gives the count, what says what they break.
type countCheck struct {
	query, what string
}

// attachmentChecks: referenced content exists and is whole, or is known to
// be missing (no bytes at all); a kept download (attach_partial.go) has its
// bytes, whole chunks; a revision holds (missing = 0) only content that is
// present.
var attachmentChecks = []countCheck{
	{`SELECT COUNT(*) FROM att_content c
			WHERE (c.present = 1 AND c.length != COALESCE((SELECT SUM(LENGTH(data)) FROM att_chunks k WHERE k.digest = COALESCE(c.chunks, c.digest)), -1))
			OR (c.present = 0 AND (c.chunks IS NOT NULL OR EXISTS (SELECT 1 FROM att_chunks k WHERE k.digest = c.digest)))`,
		"attachment contents do not match their length"},
	{`SELECT COUNT(*) FROM att_partial p
			WHERE p.length != COALESCE((SELECT SUM(LENGTH(data)) FROM att_chunks k WHERE k.digest = p.key), 0)`,
		"kept downloads do not match their length"},
	{`SELECT COUNT(*) FROM rev_atts a LEFT JOIN att_content c ON c.digest = a.digest
			WHERE c.digest IS NULL OR c.length != a.length`,
		"attachment references do not resolve"},
	{`SELECT COUNT(*) FROM rev_atts a JOIN att_content c ON c.digest = a.digest
			WHERE a.missing = 0 AND c.present = 0`,
		"attachments held without their bytes"},
}

// checkAttachments runs attachmentChecks, and attachstore.CheckChunks (the
// chunks' checksums) after the first of them.
func checkAttachments(ctx context.Context, tx *sql.Tx) ([]error, error) {
	var errs []error
	for i, c := range attachmentChecks {
		var bad int
		if err := tx.QueryRowContext(ctx, c.query).Scan(&bad); err != nil {
			return nil, err
		}
		if bad > 0 {
			errs = append(errs, fmt.Errorf("%d %s", bad, c.what))
		}
		if i == 0 {
			if err := attachstore.CheckChunks(ctx, tx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs, nil
}

// checkCounters: the stored document counts and external byte total are
// right, the purge records stay within their limit and below purge_seq,
// and no foreign key is broken.
func checkCounters(ctx context.Context, tx *sql.Tx) ([]error, error) {
	var errs []error
	var live, dead, mlive, mdead int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(SUM(deleted = 0), 0), COALESCE(SUM(deleted = 1), 0),
			(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_count'),
			(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'doc_del_count') FROM docs`).Scan(&live, &dead, &mlive, &mdead)
	if err != nil {
		return nil, err
	}
	if live != mlive || dead != mdead {
		errs = append(errs, fmt.Errorf("stored counts %d/%d, actual %d/%d", mlive, mdead, live, dead))
	}
	var ext, extWant int64
	err = tx.QueryRowContext(ctx, `SELECT (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'external_bytes'),
			(SELECT COALESCE(SUM(LENGTH(body)), 0) FROM revs) + (SELECT COALESCE(SUM(length * present), 0) FROM att_content)`).Scan(&ext, &extWant)
	if err != nil {
		return nil, err
	}
	if ext != extWant {
		errs = append(errs, fmt.Errorf("external_bytes %d, actual %d", ext, extWant))
	}
	var nInfos, maxInfo, pseq, plimit int64
	err = tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(purge_seq), 0),
			(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purge_seq'),
			(SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'purged_infos_limit') FROM purged_infos`).Scan(&nInfos, &maxInfo, &pseq, &plimit)
	if err != nil {
		return nil, err
	}
	if nInfos > plimit || maxInfo > pseq {
		errs = append(errs, fmt.Errorf("%d purge records (limit %d), newest %d, purge_seq %d", nInfos, plimit, maxInfo, pseq))
	}
	var fk int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_foreign_key_check").Scan(&fk); err != nil {
		return nil, err
	}
	if fk > 0 {
		errs = append(errs, fmt.Errorf("%d foreign key violations", fk))
	}
	return errs, nil
}
