package localdb

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// RevsDiff answers CouchDB's _revs_diff: for each document, the listed
// revisions the store does not know (not even by id) and, as possible
// ancestors, its leaves whose generation is below that of a missing
// revision. Documents with nothing missing are absent from the answer; a
// document we lack entirely has all its revisions missing and no possible
// ancestors. A malformed rev is ErrBadRequest.
func (db *DB) RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error) {
	parsed := make(map[string][]revtree.Rev, len(revs))
	ids := make([]any, 0, len(revs))
	for id, list := range revs {
		rs := make([]revtree.Rev, len(list))
		for i, s := range list {
			r, err := revtree.ParseRev(s)
			if err != nil {
				return nil, err
			}
			rs[i] = r
		}
		parsed[id] = rs
		ids = append(ids, id)
	}
	out := make(map[string]couchdoc.RevsDiffResult)
	found := make(map[string]bool, len(ids))
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		for len(ids) > 0 {
			n := min(500, len(ids))
			rows, err := tx.QueryContext(ctx, "SELECT id, tree FROM docs WHERE id IN (?"+strings.Repeat(",?", n-1)+")", ids[:n]...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				var enc []byte
				if err := rows.Scan(&id, &enc); err != nil {
					rows.Close()
					return err
				}
				t, err := revtree.Unmarshal(enc)
				if err != nil {
					rows.Close()
					return errors.Join(errors.New("doc "+id), err)
				}
				found[id] = true
				missing, possible := t.Missing(parsed[id])
				if len(missing) > 0 {
					out[id] = couchdoc.RevsDiffResult{Missing: revStrings(missing), PossibleAncestors: revStrings(possible)}
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	empty := &revtree.Tree{}
	for id, rs := range parsed {
		if found[id] {
			continue
		}
		if missing, _ := empty.Missing(rs); len(missing) > 0 {
			out[id] = couchdoc.RevsDiffResult{Missing: revStrings(missing)}
		}
	}
	return out, nil
}

func revStrings(rs []revtree.Rev) []string {
	if len(rs) == 0 {
		return nil
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.String()
	}
	return out
}
