package mobile

import (
	"github.com/settee/settee/sync"
)

// ReplicatorChangeListener hears a replicator's status: its state and
// progress. Calls come one at a time on the replicator's background
// thread; a slow listener sees the latest status, never the same one
// twice in a row.
type ReplicatorChangeListener interface {
	OnStatus(status *ReplicatorStatus)
}

// DocumentReplicationListener hears which documents a replicator moved,
// in batches, to update a "synced" badge. documentsJSON is
// {"direction":"push"|"pull","documents":[{"id":"...","rev":"...",
// "deleted":true,"error":"forbidden: ...","code":"forbidden"}]}: "deleted"
// only for a deletion, "error" and "code" (see ErrorCode) only for a
// revision the target refused or the source could not provide. Calls
// come one at a time on the replicator's background thread.
type DocumentReplicationListener interface {
	OnDocuments(documentsJSON string)
}

// AddChangeListener registers l for the replicator's status changes, beside
// the other listeners; the token's Remove ends it.
func (r *Replicator) AddChangeListener(l ReplicatorChangeListener) *ListenerToken {
	defer recoverLog("Replicator.AddChangeListener")
	if l == nil {
		return &ListenerToken{}
	}
	var last ReplicatorStatus
	remove := r.sup.AddListener(func(ev sync.Event) {
		if ev.Kind == sync.EventDocs {
			return
		}
		st := r.Status()
		if *st == last {
			return
		}
		last = *st
		callChangeStatus(l, st)
	}, false)
	return &ListenerToken{remove: remove}
}

// AddDocumentListener registers l for the documents the replicator moves,
// both directions; the token's Remove ends it. Without one, no list of
// documents is built.
func (r *Replicator) AddDocumentListener(l DocumentReplicationListener) *ListenerToken {
	defer recoverLog("Replicator.AddDocumentListener")
	if l == nil {
		return &ListenerToken{}
	}
	remove := r.sup.AddListener(func(ev sync.Event) {
		if ev.Kind != sync.EventDocs {
			return
		}
		js, err := documentsJSON(ev)
		if err != nil {
			logf(LevelError, "document listener: %v", err)
			return
		}
		callDocuments(l, js)
	}, true)
	return &ListenerToken{remove: remove}
}

// replicatedDoc is one document of DocumentReplicationListener's JSON.
type replicatedDoc struct {
	ID      string `json:"id"`
	Rev     string `json:"rev"`
	Deleted bool   `json:"deleted,omitempty"`
	Error   string `json:"error,omitempty"`
	Code    string `json:"code,omitempty"`
}

func documentsJSON(ev sync.Event) (string, error) {
	docs := make([]replicatedDoc, len(ev.Docs))
	for i, d := range ev.Docs {
		docs[i] = replicatedDoc{ID: d.ID, Rev: d.Rev, Deleted: d.Deleted}
		if d.Err != nil {
			docs[i].Error, docs[i].Code = withCode(d.Err).Error(), codeOf(d.Err)
		}
	}
	return marshal(struct {
		Direction string          `json:"direction"`
		Documents []replicatedDoc `json:"documents"`
	}{ev.Replication, docs})
}

func callDocuments(l DocumentReplicationListener, js string) {
	defer recoverLog("DocumentReplicationListener.OnDocuments")
	l.OnDocuments(js)
}

func callChangeStatus(l ReplicatorChangeListener, s *ReplicatorStatus) {
	defer recoverLog("ReplicatorChangeListener.OnStatus")
	l.OnStatus(s)
}
