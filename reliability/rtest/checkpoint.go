package rtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/sync"
)

// CheckCheckpoints checks that the replication logs of replication id on
// source and target never run ahead of what the target holds: every change
// of the source feed up to a log's source_last_seq must be on the target
// (revs_diff finds nothing missing). It returns how many logs it checked.
// Sequences are compared numerically when both are integers (pouchdb-server
// and our store), else only by equality.
func CheckCheckpoints(ctx context.Context, t testing.TB, id string, source, target sync.Peer) int {
	t.Helper()
	var seqs []json.RawMessage
	for _, p := range []sync.Peer{source, target} {
		raw, err := p.GetLocal(ctx, id)
		if errors.Is(err, couchdoc.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatalf("checkpoint %s on %s: %v", id, p, err)
		}
		if bytes.Contains(raw, []byte("secret")) || bytes.Contains(raw, []byte("password")) {
			t.Errorf("checkpoint %s on %s holds a credential: %s", id, p, raw)
		}
		var log sync.ReplicationLog
		if err := json.Unmarshal(raw, &log); err != nil {
			t.Fatalf("checkpoint %s on %s: %v: %s", id, p, err, raw)
		}
		if len(log.SourceLastSeq) > 0 && string(log.SourceLastSeq) != "null" {
			seqs = append(seqs, log.SourceLastSeq)
		}
	}
	if len(seqs) == 0 {
		return 0
	}
	type row struct {
		seq  json.RawMessage
		id   string
		revs []string
	}
	var rows []row
	last, err := source.Changes(ctx, sync.ChangesOptions{}, func(c *couchdoc.Change) error {
		rows = append(rows, row{append(json.RawMessage(nil), c.Seq...), c.ID, c.Revs()})
		return nil
	})
	if err != nil {
		t.Fatalf("checkpoint check: source feed: %v", err)
	}
	for _, cp := range seqs {
		n := -1
		cpi, cpInt := asInt(cp)
		for i, r := range rows {
			if bytes.Equal(r.seq, cp) {
				n = i + 1
				break
			}
			if ri, ok := asInt(r.seq); ok && cpInt && ri <= cpi {
				n = i + 1
			}
		}
		if n < 0 {
			if !bytes.Equal(cp, last) {
				t.Errorf("checkpoint %s: source_last_seq %s is neither in the source feed nor its last_seq %s", id, cp, last)
				continue
			}
			n = len(rows)
		}
		req := map[string][]string{}
		for _, r := range rows[:n] {
			req[r.id] = append(req[r.id], r.revs...)
		}
		if len(req) == 0 {
			continue
		}
		missing, err := target.RevsDiff(ctx, req)
		if err != nil {
			t.Fatalf("checkpoint check: revs_diff: %v", err)
		}
		if len(missing) > 0 {
			Count.Lost.Add(int64(len(missing)))
			for did, m := range missing {
				t.Errorf("checkpoint %s at %s ran ahead: %q %v is not on the target", id, cp, did, m.Missing)
				break
			}
		}
	}
	return len(seqs)
}

func asInt(raw json.RawMessage) (int64, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}
