package mobile

import (
	"encoding/json"

	"github.com/settee/settee/sync"
)

// PendingDocumentIDs returns, as a JSON array of strings sorted by id, the
// documents this replicator has still to push: changed locally after what
// its push read, or read and not yet acknowledged by the remote. When it
// is not running it reads the local checkpoint only, so it answers
// offline. A pull-only replicator has nothing to push: bad_request.
func (r *Replicator) PendingDocumentIDs() (ids string, err error) {
	defer recoverTo(&err)
	if err := r.checkPending(); err != nil {
		return "", err
	}
	list, err := r.sup.PendingDocIDs(r.db.ctx)
	if err != nil {
		return "", err
	}
	if list == nil {
		list = []string{}
	}
	b, err := json.Marshal(list)
	return string(b), err
}

// IsDocumentPending reports whether PendingDocumentIDs would list docID,
// reading that document's change only.
func (r *Replicator) IsDocumentPending(docID string) (pending bool, err error) {
	defer recoverTo(&err)
	if err := r.checkPending(); err != nil {
		return false, err
	}
	return r.sup.IsDocumentPending(r.db.ctx, docID)
}

// checkPending refuses the pending questions a replicator cannot answer.
func (r *Replicator) checkPending() error {
	if r.cfg.Direction == "pull" {
		return badRequest("a pull-only replicator pushes nothing")
	}
	return r.db.check()
}

// directionPending returns the push and pull pending counts of a
// session's status (-1 when unknown or not replicated).
func (r *Replicator) directionPending(st sync.Status) (push, pull int64) {
	push, pull = -1, -1
	switch r.cfg.Direction {
	case "push":
		return st.Pending, -1
	case "pull":
		return -1, st.Pending
	}
	for _, d := range st.Directions {
		switch d.Replication {
		case "push":
			push = d.Pending
		case "pull":
			pull = d.Pending
		}
	}
	return push, pull
}
