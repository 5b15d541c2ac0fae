package mobile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// ConflictResolver is implemented by the app to settle conflicting
// revisions of a document. Resolve is given the document's id and its
// live leaf revisions as a JSON array of documents, the current winner
// first. It returns one of:
//   - the revision id of one of the leaves ("3-abc..."): that leaf wins as
//     it is, the others are deleted;
//   - a JSON object: the merged document, written as a new revision on top
//     of the winner, the other leaves are deleted; without _attachments it
//     keeps the winner's attachments, with them it has exactly those
//     listed (inline, or stubs of the winner's);
//   - "": leave the document in conflict for now.
//
// It is called on a background thread, one document at a time. It must not
// call Replicator.Stop or Database.Close.
type ConflictResolver interface {
	Resolve(docID string, leavesJSON string) (string, error)
}

// Conflicts returns the ids of the documents whose winning revision has
// conflicts, as a JSON array of strings.
func (d *Database) Conflicts() (idsJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	ids, err := d.conflictIDs()
	if err != nil {
		return "", err
	}
	return marshal(ids)
}

func (d *Database) conflictIDs() ([]string, error) {
	ids := []string{}
	err := d.db.Conflicts(d.ctx, func(id string) error {
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// ResolveConflicts asks resolver about every conflicted document and
// applies its answers. It returns how many documents it resolved; on
// errors it goes on with the other documents and returns the first error.
func (d *Database) ResolveConflicts(resolver ConflictResolver) (resolved int64, err error) {
	defer recoverTo(&err)
	if resolver == nil {
		return 0, badRequest("nil conflict resolver")
	}
	if err := d.checkWrite(); err != nil {
		return 0, err
	}
	ids, err := d.conflictIDs()
	if err != nil {
		return 0, err
	}
	var first error
	for _, id := range ids {
		if d.ctx.Err() != nil {
			return resolved, errClosed
		}
		ok, err := d.resolveOne(id, resolver)
		if err != nil {
			err = fmt.Errorf("resolve conflicts of %q: %w", id, err)
			logf(LevelWarn, "%v", err)
			if first == nil {
				first = err
			}
		}
		if ok {
			resolved++
		}
	}
	return resolved, first
}

// resolveOne resolves one document; it reports whether it wrote anything.
func (d *Database) resolveOne(id string, resolver ConflictResolver) (bool, error) {
	winner, err := d.db.Get(d.ctx, id, localdb.GetOptions{Conflicts: true})
	if err != nil {
		return false, err
	}
	if len(winner.Conflicts) == 0 {
		return false, nil // resolved meanwhile
	}
	leaves := []*couchdoc.Doc{winner}
	for _, rev := range winner.Conflicts {
		doc, err := d.db.Get(d.ctx, id, localdb.GetOptions{Rev: rev})
		if err != nil {
			return false, err
		}
		leaves = append(leaves, doc)
	}
	winner.Conflicts = nil
	js, err := json.Marshal(leaves)
	if err != nil {
		return false, err
	}
	answer, err := callResolver(resolver, id, string(js))
	if err != nil {
		return false, err
	}
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return false, nil
	}
	keep, merged := answer, (*couchdoc.Doc)(nil)
	if strings.HasPrefix(answer, "{") {
		if merged, err = couchdoc.ParseDoc([]byte(answer)); err != nil {
			return false, err
		}
		keep = winner.Rev
	}
	_, err = d.db.ResolveConflict(d.ctx, id, keep, merged)
	if errors.Is(err, localdb.ErrNoConflict) {
		return false, nil // resolved meanwhile
	}
	return err == nil, err
}

// callResolver calls the app's resolver, turning its panic into an error.
func callResolver(r ConflictResolver, id, leaves string) (answer string, err error) {
	defer recoverTo(&err)
	return r.Resolve(id, leaves)
}
