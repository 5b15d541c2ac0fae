package sync

import (
	"context"
	"encoding/json"
)

// Pending counts are kept document by document: a replication's pending
// count is the changes the source holds after the last row read (as the
// source counts them: Peer.Changes reports it to ChangesOptions.OnPending,
// a PendingCounter at the start of a session) plus the documents read
// whose revisions the target has not yet acknowledged or refused. A
// document leaves the count in the same step that adds its write to
// Stats, so an event's Pending and Stats agree. The count is exact when
// the source counts exactly (the local store for unfiltered and doc_ids
// feeds; CouchDB and settee serve for unfiltered ones) and nothing else
// writes the target's copies of those documents; a document edited on the
// source while it is in flight counts twice until the edit is read; after
// a resume, a document written to the target after the last checkpoint
// counts until revs_diff answers for its batch; a
// selector-filtered feed counts every change after the sequence, as
// CouchDB does.

// openDocs notes the documents of a freshly read batch as pending, with
// unread the source's count of the changes after the batch (-1 when the
// source did not say: the previous count less the rows read). The caller
// holds r.mu.
func (r *replication) openDocsLocked(b *batch, unread int64) {
	b.open = make(map[string]int, len(b.rows))
	for _, c := range b.rows {
		b.open[c.ID] = 1
	}
	r.inflight += int64(len(b.open))
	if r.batches != nil {
		r.batches[b] = struct{}{}
	}
	switch {
	case unread >= 0:
		r.remaining = unread
	case r.remaining >= 0:
		r.remaining = max(0, r.remaining-int64(len(b.rows)))
	}
}

// diffed records, once revs_diff answered for b, how many revisions of
// each document are to be written; documents the target has in full leave
// the pending count.
func (r *replication) diffed(b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	missing := make(map[string]int, len(b.missing)+len(b.ready))
	for _, m := range b.missing {
		missing[m.id] += len(m.revs)
	}
	for _, d := range b.ready {
		missing[d.ID]++
	}
	for id := range b.open {
		if n := missing[id]; n > 0 {
			b.open[id] = n
		} else {
			delete(b.open, id)
			r.inflight--
			r.stats.DocsCompleted++
		}
	}
}

// settle adds st to the counters and, in the same step, marks one
// revision of each of ids (repeated for several revisions) as handled:
// written, refused or unreadable. A document with no revision left leaves
// the pending count.
func (r *replication) settle(b *batch, ids []string, st Stats) {
	r.mu.Lock()
	r.stats.Add(st)
	if st.DocsWritten > 0 || st.DocWriteFailures > 0 {
		r.progress = true
	}
	for _, id := range ids {
		n, ok := b.open[id]
		if !ok {
			continue
		}
		if n <= 1 {
			delete(b.open, id)
			r.inflight--
			r.stats.DocsCompleted++
		} else {
			b.open[id] = n - 1
		}
	}
	r.mu.Unlock()
}

// closeDocs drops what is left of b from the pending count when b
// completes (revisions the source did not return). The caller holds r.mu.
func (r *replication) closeDocsLocked(b *batch) {
	r.inflight -= int64(len(b.open))
	r.stats.DocsCompleted += int64(len(b.open))
	b.open = nil
	delete(r.batches, b)
}

// PendingCounter is the optional capability of a peer that counts the
// changes a feed would give without a request (the local store, from its
// seq index). A session starts with that count; with a peer without it,
// the count comes with the first batch read (CouchDB's "pending"), and
// before that Pending is -1, or the source's document count for a first
// replication.
type PendingCounter interface {
	// PendingChanges counts the changes after opts.Since that a normal
	// feed with opts would give, with ChangesOptions.OnPending's rules for
	// filtered feeds.
	PendingChanges(ctx context.Context, opts ChangesOptions) (int64, error)
}

// countUnread counts the source's changes after startSeq for this
// replication's feed when the source is a PendingCounter; -1 otherwise or
// when counting fails (the session reads the feed next and reports any
// error then).
func (r *replication) countUnread(ctx context.Context, startSeq json.RawMessage) int64 {
	pc, ok := r.opts.Source.(PendingCounter)
	if !ok {
		return -1
	}
	n, err := pc.PendingChanges(ctx, ChangesOptions{Since: startSeq, DocIDs: r.opts.DocIDs, Selector: r.opts.Selector,
		Filter: r.opts.Filter, QueryParams: r.opts.QueryParams})
	if err != nil {
		return -1
	}
	return n
}
