package sync

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
)

// ReplicationIDVersion is recorded in the replication logs
// (replication_id_version); it changes when ReplicationID's inputs change.
const ReplicationIDVersion = 3

// noLocalUUID replaces the local store's UUID in the replication id of a
// replication between two peers that have none (remote to remote): the id
// then rests on the two URLs alone, the same on every machine.
const noLocalUUID = "settee-remote-to-remote"

// ReplicationID returns the id under which the replication's checkpoints are
// recorded (as _local/<id> on both peers). It is the md5 of: the UUID of the
// peer that has one (the local store: source first, then target; see
// noLocalUUID when neither has), the names of source and target
// (Peer.String(), URLs without credentials; a peer with a UUID is named by
// it instead, so moving the store's file keeps the id), the filter and its
// sorted query params, the sorted doc ids, the compacted selector, and the
// continuous flag. create_target is hashed as false whatever CreateTarget
// says: creating a missing target changes nothing of what is replicated,
// so a push with it and the plain pushes after it share one checkpoint
// (CouchDB hashes the flag, and so re-checks every document when it
// changes). It does no I/O, so it is stable across runs and machines of
// the same install.
func ReplicationID(o Options) string {
	var b bytes.Buffer
	field := func(k, v string) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(v))
		b.WriteByte('\n')
	}
	uuid := noLocalUUID
	if id, ok := o.Source.(Identifier); ok && id.UUID() != "" {
		uuid = id.UUID()
	} else if id, ok := o.Target.(Identifier); ok && id.UUID() != "" {
		uuid = id.UUID()
	}
	field("v", strconv.Itoa(ReplicationIDVersion))
	field("uuid", uuid)
	field("source", peerName(o.Source))
	field("target", peerName(o.Target))
	if o.Filter != "" {
		field("filter", o.Filter)
		keys := make([]string, 0, len(o.QueryParams))
		for k := range o.QueryParams {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			field("param:"+k, o.QueryParams[k])
		}
	}
	if len(o.DocIDs) > 0 {
		ids := append([]string(nil), o.DocIDs...)
		sort.Strings(ids)
		for _, id := range ids {
			field("doc_id", id)
		}
	}
	if len(o.Selector) > 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, o.Selector); err != nil {
			c.Reset()
			c.Write(o.Selector)
		}
		field("selector", c.String())
	}
	field("continuous", strconv.FormatBool(o.Continuous))
	field("create_target", "false") // kept, so that earlier ids stay valid
	sum := md5.Sum(b.Bytes())
	return hex.EncodeToString(sum[:])
}

func peerName(p Peer) string {
	if id, ok := p.(Identifier); ok && id.UUID() != "" {
		return "uuid:" + id.UUID()
	}
	return p.String()
}
