package sync_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// missingLogs is a remote whose replication log reads answer 404 while
// misses lasts (a cluster read missing the node holding the _local
// document), or always with gone.
type missingLogs struct {
	sync.Peer
	misses atomic.Int32
	gone   bool
	reads  atomic.Int32
}

func (m *missingLogs) GetLocal(ctx context.Context, id string) (json.RawMessage, error) {
	m.reads.Add(1)
	if m.gone || m.misses.Add(-1) >= 0 {
		return nil, couchdoc.ErrNotFound
	}
	return m.Peer.GetLocal(ctx, id)
}

// oneShot runs one replication and returns its result.
func oneShot(t *testing.T, src, tgt sync.Peer) *sync.Result {
	t.Helper()
	res, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: src, Target: tgt, RetryDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A replication resumed while the remote's replication log reads 404 for
// a while (a cluster node down) reads it again and resumes from the
// checkpoint; when the remote log is really gone, the local log's
// sequence is used when consistent, and a remote that is another database
// now (emptied or recreated) starts over.
func TestResumeWhenRemoteLogMissing(t *testing.T) {
	h := startHub(t)
	for _, dir := range []string{"pull", "push"} {
		t.Run(dir, func(t *testing.T) {
			remoteURL := h.url("logs-" + dir)
			testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil)
			db := localdbtest.OpenNamed(t, "local", nil)
			local := synctest.Local(db)
			m := &missingLogs{Peer: synctest.Remote(t, remoteURL, nil)}
			src, tgt := sync.Peer(m), local
			if dir == "push" {
				src, tgt = local, m
			}
			write := func(prefix string) {
				if dir == "pull" {
					putRemote(t, remoteURL, prefix, 30)
				} else {
					synctest.PutDocs(t, db, prefix, 30)
				}
			}
			write("a")
			first := oneShot(t, src, tgt)
			if first.Stats.DocsWritten != 30 {
				t.Fatalf("first run wrote %d", first.Stats.DocsWritten)
			}
			write("b")

			// Two misses, then the log: resumed from the checkpoint.
			m.misses.Store(2)
			res := oneShot(t, src, tgt)
			if string(res.StartSeq) != string(first.LastSeq) || res.Stats.DocsRead != 30 {
				t.Fatalf("after 2 missed reads: started at %s (want %s), read %d docs (want 30)", res.StartSeq, first.LastSeq, res.Stats.DocsRead)
			}
			if res.Retries < 2 {
				t.Fatalf("the missed reads were not counted as retries: %d", res.Retries)
			}

			// The remote's log is gone for good: a full replication, as
			// CouchDB's, which fetches only the 30 new documents.
			m.gone = true
			write("c")
			res2 := oneShot(t, src, tgt)
			if len(res2.StartSeq) != 0 || res2.Stats.DocsRead != 30 {
				t.Fatalf("remote log gone: started at %s (want a full replication), read %d docs (want 30)", res2.StartSeq, res2.Stats.DocsRead)
			}

			// The remote is another database now: start over.
			testutil.DoJSON(context.Background(), t, "DELETE", remoteURL, nil, nil)
			testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil)
			if dir == "pull" {
				putRemote(t, remoteURL, "d", 5)
			}
			res3 := oneShot(t, src, tgt)
			if len(res3.StartSeq) != 0 {
				t.Fatalf("remote recreated: resumed at %s, want a full replication", res3.StartSeq)
			}
			if dir == "push" {
				if n, _ := synctest.RemoteDocCount(t, remoteURL); n != 90 {
					t.Fatalf("recreated target holds %d documents after the push, want 90", n)
				}
			} else if got := docCount(t, db); got != 95 {
				t.Fatalf("local holds %d documents, want 95", got)
			}
		})
	}
}
