package localdb

import (
	"context"
	"fmt"
	"slices"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// Resolution is what ResolveConflict wrote.
type Resolution struct {
	// Rev is the winning revision: keep, or the merge written on it.
	Rev string
	// Deleted lists the other live leaves, now tombstones.
	Deleted []string
}

// ResolveConflict settles the conflict of document id in one write
// transaction: leaf keep ("" for the current winner) wins, with merged,
// when not nil, written on it as a new revision, and every other live leaf
// is deleted. Either all of it is written or nothing.
//
// The attachments of merged follow one rule: when merged has no
// _attachments (nil), it keeps keep's attachments as they are; otherwise it
// has exactly the ones it lists (inline, streamed, or stubs of keep's),
// so an empty _attachments object drops them. merged's _id, _rev and
// _deleted are ignored.
//
// A missing document or a keep that is not a live leaf is
// couchdoc.ErrNotFound; a document with a single live leaf is
// ErrNoConflict, and nothing is written. Errors of merged are those of Put
// (couchdoc.ErrBadRequest, couchdoc.ErrMissingStub, ...).
func (db *DB) ResolveConflict(ctx context.Context, id, keep string, merged *couchdoc.Doc) (*Resolution, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	var m *couchdoc.Doc
	var staged map[*couchdoc.Attachment]*attachstore.Staged
	if merged != nil {
		cp := *merged
		m = &cp
		m.ID, m.Deleted = id, false
		var err error
		if staged, err = db.stage(ctx, []*couchdoc.Doc{m}); err != nil {
			return nil, err
		}
		defer db.unstage(ctx, staged)
	}
	res := &Resolution{}
	err := db.writeDocs(ctx, attWriter{staged: staged}, func(w *docWriter) error {
		states, err := w.preload([]*couchdoc.Doc{{ID: id}})
		if err != nil {
			return err
		}
		st := states[id]
		if st == nil {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		var live []string
		for _, i := range st.tree.Leaves() {
			if n := st.tree.Nodes[i]; !n.Deleted {
				live = append(live, n.Rev.String())
			}
		}
		switch {
		case st.docID == 0 || len(live) == 0:
			return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		case keep == "":
			keep = live[0]
		case !slices.Contains(live, keep):
			return couchdoc.Errorf(couchdoc.ErrNotFound, "revision %s of %q is not a leaf, or is deleted (live leaves: %v)", keep, id, live)
		}
		if len(live) < 2 {
			return ErrNoConflict
		}
		res.Rev = keep
		if m != nil {
			m.Rev = keep
			if m.Attachments == nil {
				all, err := w.revAtts(st.docID)
				if err != nil {
					return err
				}
				for name, a := range all[keep] {
					if m.Attachments == nil {
						m.Attachments = make(map[string]*couchdoc.Attachment)
					}
					m.Attachments[name] = a.stub()
				}
			}
			if err := db.checkWrite(ctx, m, true); err != nil {
				return err
			}
			if res.Rev, err = w.putEdit(states, m); err != nil {
				return fmt.Errorf("write the merge: %w", err)
			}
		}
		for _, rev := range live {
			if rev == keep {
				continue
			}
			tomb := &couchdoc.Doc{ID: id, Rev: rev, Deleted: true}
			if err := db.checkWrite(ctx, tomb, true); err != nil {
				return err
			}
			if _, err := w.putEdit(states, tomb); err != nil {
				return fmt.Errorf("delete %s: %w", rev, err)
			}
			res.Deleted = append(res.Deleted, rev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
