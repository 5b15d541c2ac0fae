package sync

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
)

// missingLogRereads bounds the extra reads of a remote replication log
// answered 404 while the local peer's log says both were written.
const missingLogRereads = 3

// recheckLogs reads again, a few times with backoff, the remote peer's
// replication log when only the local peer's was found. A clustered
// CouchDB keeps a _local document on some shard copies only (internal
// replication does not copy them), so while a node is down a read may
// miss a log that is there: a 404 then is not proof that it is gone.
// Each re-read counts as a retry.
func (r *replication) recheckLogs(ctx context.Context, srcLog, tgtLog *ReplicationLog) (*ReplicationLog, *ReplicationLog, error) {
	src, tgt := r.opts.Source, r.opts.Target
	p, role, missing := src, "source", &srcLog
	if tgtLog == nil {
		p, role, missing = tgt, "target", &tgtLog
	}
	if _, local := p.(Identifier); local {
		return srcLog, tgtLog, nil // a local store's read is the truth
	}
	for attempt := 0; attempt < missingLogRereads && *missing == nil; attempt++ {
		r.retries.Add(1)
		if err := sleep(ctx, backoff(attempt, r.opts.RetryDelay, r.opts.MaxRetryDelay)); err != nil {
			return nil, nil, err
		}
		l, err := readLog(ctx, p, r.repID)
		if err != nil && !isTransient(err) {
			return nil, nil, peerErr(role, p, "read checkpoint", err)
		}
		*missing = l
	}
	return srcLog, tgtLog, nil
}

// oneSidedStart is where to resume when only the local peer holds the
// replication log (an Identifier peer's) after recheckLogs: from its
// sequence, when the log is
// consistent and the remote shows no sign of being another database
// since; else nil, a full replication (revs_diff keeps it from writing
// anything twice).
//
//   - The log must be whole: its session is its newest history entry and
//     its source_last_seq that entry's recorded_seq.
//   - Pull (the local store is the target): the target's log is written
//     only once everything up to its sequence is durable on it, so that
//     sequence is safe to resume from as long as the remote source is the
//     same database. With integer sequences (PouchDB, Settee) its
//     update_seq must not be below the log's: a database deleted and
//     created again starts over. CouchDB's opaque sequences name the
//     shard files they come from, and CouchDB itself reads a since of
//     another incarnation from 0; their numbers are sums over whichever
//     shard copies answered, which differ between nodes, so they are not
//     compared.
//   - Push (the local store is the source): the remote target must not
//     be empty (a database deleted and created again would be).
func (r *replication) oneSidedStart(srcLog, tgtLog *ReplicationLog, srcInfo, tgtInfo *PeerInfo) (json.RawMessage, []HistoryEntry) {
	l, remote, holder := tgtLog, srcInfo, r.opts.Target
	if l == nil {
		l, remote, holder = srcLog, tgtInfo, r.opts.Source
	}
	if _, local := holder.(Identifier); !local {
		return nil, nil // only the local store's own log is trusted alone
	}
	if l == nil || len(l.History) == 0 || l.History[0].SessionID != l.SessionID ||
		!bytes.Equal(bytes.TrimSpace(l.SourceLastSeq), bytes.TrimSpace(l.History[0].RecordedSeq)) {
		return nil, nil
	}
	seq := nonNull(l.SourceLastSeq)
	if tgtLog != nil { // pull
		if n, ok := seqNumber(remote.UpdateSeq); ok {
			if m, ok := seqNumber(seq); ok && n < m {
				return nil, nil
			}
		}
	} else if remote.DocCount+remote.DocDelCount == 0 {
		return nil, nil
	}
	return seq, l.History
}

// seqNumber is an integer sequence's value (a JSON number, or a string
// holding only digits); false for CouchDB's opaque strings.
func seqNumber(seq json.RawMessage) (int64, bool) {
	s := string(bytes.TrimSpace(seq))
	if len(s) > 1 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
