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
	p, err := r.pendingHandle()
	if err != nil {
		return "", err
	}
	list, err := p.PendingDocIDs(r.db.ctx)
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
	p, err := r.pendingHandle()
	if err != nil {
		return false, err
	}
	return p.IsDocumentPending(r.db.ctx, docID)
}

// pendingHandle returns the running session, or a push handle with the
// session's replication id that is never started.
func (r *Replicator) pendingHandle() (*sync.Replicator, error) {
	if r.cfg.Direction == "pull" {
		return nil, badRequest("a pull-only replicator pushes nothing")
	}
	if err := r.db.check(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	if sess != nil {
		return sess, nil
	}
	o := r.opts
	o.Source, o.Target, o.OnEvent = r.local, r.remote, nil
	if r.cfg.Direction == "both" {
		o.Filter, o.QueryParams, o.Since = "", nil, nil // as sync.NewSync's push
	}
	return sync.New(o)
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
