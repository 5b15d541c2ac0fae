package sync

import (
	"context"
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
