package localdb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/settee/settee/localdb/revtree"
)

// goSteps are the parts of numbered migrations that SQL cannot do, run in
// the migration's transaction after its SQL.
var goSteps = map[int]func(ctx context.Context, tx *sql.Tx) error{
	10: canonicalRevs,
}

// canonicalRevs is version 10's step: every document whose tree holds a
// rev id not in CouchDB's form (revtree.Tree.Canonicalize), or whose
// stored winner is not the one CouchDB's order of ids picks, gets its
// tree, the revs of its bodies and its winner rewritten. When a winner
// changes the indexes are rebuilt at open (their entries follow the
// winner). A document whose ids would merge once canonical (two spellings
// of one revision, which only a peer sending both could have made) is
// left as it is.
func canonicalRevs(ctx context.Context, tx *sql.Tx) error {
	type fix struct {
		docID  int64
		tree   *revtree.Tree
		names  map[string]string // old rev -> new, for the revs rows
		winner string            // the stored winner
	}
	var fixes []fix
	rows, err := tx.QueryContext(ctx, "SELECT doc_id, tree, winner FROM docs")
	if err != nil {
		return err
	}
	for rows.Next() {
		var docID int64
		var enc []byte
		var winner string
		if err := rows.Scan(&docID, &enc, &winner); err != nil {
			rows.Close()
			return err
		}
		t, err := revtree.Unmarshal(enc)
		if err != nil {
			rows.Close()
			return fmt.Errorf("doc %d: %w", docID, err)
		}
		names, ok := t.Canonicalize()
		if !ok {
			continue
		}
		if len(names) > 0 || t.Nodes[t.Winner()].Rev.String() != winner {
			fixes = append(fixes, fix{docID, t, names, winner})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	rebuild := false
	for _, f := range fixes {
		for from, to := range f.names {
			if _, err := tx.ExecContext(ctx, "UPDATE revs SET rev = ? WHERE doc_id = ? AND rev = ?", to, f.docID, from); err != nil {
				return err
			}
		}
		wn := f.tree.Nodes[f.tree.Winner()]
		if renamed, ok := f.names[f.winner]; (ok && renamed != wn.Rev.String()) || (!ok && f.winner != wn.Rev.String()) {
			rebuild = true // another revision wins: its body is what indexes see
		}
		if _, err := tx.ExecContext(ctx, "UPDATE docs SET tree = ?, winner = ? WHERE doc_id = ?", f.tree.Marshal(), wn.Rev.String(), f.docID); err != nil {
			return err
		}
	}
	if rebuild {
		if _, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key = 'mango_key_version'"); err != nil {
			return err
		}
	}
	return nil
}
