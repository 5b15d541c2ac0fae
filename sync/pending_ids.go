package sync

import (
	"context"
	"slices"

	"github.com/settee/settee/couchdoc"
)

// PendingDocIDs lists, sorted, the documents the replication has still to
// send: for a Sync handle its push, for a one-direction handle its
// source's. They are the documents changed on the source after what the
// replication read, plus those read whose revisions the target has not
// yet acknowledged. Before the replication ran in this process, they are
// the source's changes after the last checkpoint the source holds for
// this replication (its replication id): nothing but the source is read,
// so a push from the local store answers offline. A source that is a
// remote is read over the network. Filters (DocIDs, Selector, Filter)
// apply as to the replication.
func (r *Replicator) PendingDocIDs(ctx context.Context) ([]string, error) {
	return r.reps[0].pendingIDs(ctx, nil)
}

// IsDocumentPending reports whether PendingDocIDs would list id, reading
// only that document's change.
func (r *Replicator) IsDocumentPending(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, couchdoc.Errorf(couchdoc.ErrBadRequest, "a document id is required")
	}
	ids, err := r.reps[0].pendingIDs(ctx, []string{id})
	return len(ids) > 0, err
}

// pendingIDs lists the pending documents, restricted to only when it is
// not nil.
func (r *replication) pendingIDs(ctx context.Context, only []string) ([]string, error) {
	set := map[string]bool{}
	r.mu.Lock()
	ran := r.tracker != nil
	since := r.lastSeq
	for b := range r.batches {
		for id := range b.open {
			set[id] = true
		}
	}
	r.mu.Unlock()
	src := r.opts.Source
	if !ran {
		l, err := readLog(ctx, src, r.repID)
		if err != nil {
			return nil, peerErr("source", src, "read checkpoint", err)
		}
		if l != nil {
			since = nonNull(l.SourceLastSeq)
		}
		if len(r.opts.Since) > 0 {
			since = nonNull(r.opts.Since)
		}
	}
	docIDs := r.opts.DocIDs
	if only != nil {
		docIDs = only
		if len(r.opts.DocIDs) > 0 {
			docIDs = nil
			for _, id := range only {
				if slices.Contains(r.opts.DocIDs, id) {
					docIDs = append(docIDs, id)
				}
			}
			if len(docIDs) == 0 {
				return nil, nil
			}
		}
		for id := range set {
			if !slices.Contains(only, id) {
				delete(set, id)
			}
		}
	}
	opts := ChangesOptions{Since: since, Feed: "normal", DocIDs: docIDs, Selector: r.opts.Selector,
		Filter: r.opts.Filter, QueryParams: r.opts.QueryParams}
	_, err := src.Changes(ctx, opts, func(c *couchdoc.Change) error {
		if c.ID != "" && len(c.Changes) > 0 {
			set[c.ID] = true
		}
		return nil
	})
	if err != nil {
		return nil, peerErr("source", src, "read changes", err)
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}
