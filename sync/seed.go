package sync

import (
	"context"
	"encoding/json"
)

// asPeer gives a peer another UUID, to compute the replication id a seed
// store had for the same replication.
type asPeer struct {
	Peer
	uuid string
}

func (p asPeer) UUID() string { return p.uuid }

// seedIDs returns the replication ids the seeds of a Seeded local peer had
// for this replication, the nearest seed first.
func seedIDs(o Options) []string {
	var ids []string
	for _, side := range []*Peer{&o.Source, &o.Target} {
		s, ok := (*side).(Seeded)
		if !ok {
			continue
		}
		if id, ok := (*side).(Identifier); !ok || id.UUID() == "" {
			continue
		}
		orig := *side
		for _, u := range s.SeedUUIDs() {
			*side = asPeer{Peer: orig, uuid: u}
			ids = append(ids, ReplicationID(o))
		}
		*side = orig
		break // a store replicating with a remote: one seeded side
	}
	return ids
}

// seedStart finds where a clone's replication with no checkpoint of its own
// can resume: from the newest seed whose checkpoints on both peers still
// share a session (the clone's copy of the seed's log, and the other peer's,
// which the seed may have moved on since: the histories find the session
// the clone's data holds). Nothing is written under the seed's ids.
func (r *replication) seedStart(ctx context.Context) (json.RawMessage, []HistoryEntry, error) {
	for _, id := range seedIDs(r.opts) {
		var srcLog, tgtLog *ReplicationLog
		if err := r.retry(ctx, func() (err error) { srcLog, err = readLog(ctx, r.opts.Source, id); return err }); err != nil {
			return nil, nil, peerErr("source", r.opts.Source, "read seed checkpoint", err)
		}
		if srcLog == nil {
			continue
		}
		if err := r.retry(ctx, func() (err error) { tgtLog, err = readLog(ctx, r.opts.Target, id); return err }); err != nil {
			return nil, nil, peerErr("target", r.opts.Target, "read seed checkpoint", err)
		}
		if seq, hist := compareLogs(srcLog, tgtLog); seq != nil {
			return seq, hist, nil
		}
	}
	return nil, nil, nil
}

// sharedIdentity reports whether a replication's two logs show two stores
// sharing one UUID: each side's latest session is missing from the other
// side's history. A crash between the two checkpoint writes, or a peer
// restored from a backup, leaves one side behind, but its latest session
// is still in the other's history.
func sharedIdentity(a, b *ReplicationLog) bool {
	if a == nil || b == nil || a.SessionID == "" || b.SessionID == "" || a.SessionID == b.SessionID {
		return false
	}
	known := func(h []HistoryEntry, id string) bool {
		for _, e := range h {
			if e.SessionID == id {
				return true
			}
		}
		return false
	}
	return !known(a.History, b.SessionID) && !known(b.History, a.SessionID)
}

// hasUUID reports whether a peer has a UUID (a local store): only then
// does a replication id belong to one store. Remote-to-remote
// replications share their ids across machines by design.
func hasUUID(peers ...Peer) bool {
	for _, p := range peers {
		if id, ok := p.(Identifier); ok && id.UUID() != "" {
			return true
		}
	}
	return false
}
