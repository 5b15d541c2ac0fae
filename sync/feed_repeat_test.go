package sync_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// repeatingFeed is a source whose changes feed breaks once (a connection
// reset) and, asked again, starts over from the beginning, as a cluster
// does for the shard positions of a node that died.
type repeatingFeed struct {
	sync.Peer
	calls atomic.Int32
}

func (p *repeatingFeed) Changes(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	switch p.calls.Add(1) {
	case 2:
		return nil, syscall.ECONNRESET
	case 3:
		opts.Since = nil
	}
	return p.Peer.Changes(ctx, opts, fn)
}

// A first pull into an empty target (which takes the documents from the
// feed and skips revs_diff) whose feed repeats changes after a failure
// does not write them again: from the retry on, revs_diff decides. (A
// revision written twice changes nothing in the target, but it is work
// and counts as written.)
func TestRepeatedFeedAfterRetryWritesOnce(t *testing.T) {
	src, dst := localdbtest.OpenNamed(t, "src", nil), localdbtest.OpenNamed(t, "dst", nil)
	synctest.PutDocs(t, src, "d", 100)
	feed := &repeatingFeed{Peer: synctest.Local(src)}
	res, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: feed, Target: synctest.Local(dst), BatchSize: 30, RetryDelay: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if feed.calls.Load() < 3 || res.Retries == 0 {
		t.Fatalf("the feed was asked %d times, %d retries: the fault did not happen", feed.calls.Load(), res.Retries)
	}
	if res.Stats.DocsWritten != 100 {
		t.Fatalf("%d revisions written for 100 documents: some were written twice", res.Stats.DocsWritten)
	}
	if n := docCount(t, dst); n != 100 {
		t.Fatalf("target holds %d documents", n)
	}
}
