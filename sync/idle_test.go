package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
)

// A continuous replication whose feed ends on a full batch must still be
// seen caught up: the request after a full batch may not park on a longpoll
// waiting for a change that never comes.
func TestContinuousIdleAfterFullBatch(t *testing.T) {
	const batch = 10
	src, dst := localdbtest.OpenNamed(t, "src", nil), localdbtest.OpenNamed(t, "dst", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < batch; i++ {
		if _, err := src.Put(ctx, &couchdoc.Doc{ID: fmt.Sprintf("d%02d", i), Body: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	rep := startContinuous(ctx, t, src, dst, batch)
	deadline := time.Now().Add(10 * time.Second)
	for rep.Status().State != sync.StateIdle {
		if time.Now().After(deadline) {
			t.Fatalf("never idle after a full batch: %+v", rep.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if info, err := dst.Info(ctx); err != nil || info.DocCount != batch {
		t.Fatalf("target: %+v %v, want %d docs", info, err, batch)
	}
}

// A continuous push that waits for changes and is woken by one commit of
// more documents than its batch size must push them all: the local feed
// used to return the sequence it woke at instead of its last row's, so the
// documents past the first batch were skipped for good.
func TestContinuousBurstOverBatchSize(t *testing.T) {
	const batch, burst = 10, 35
	src, dst := localdbtest.OpenNamed(t, "src", nil), localdbtest.OpenNamed(t, "dst", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep := startContinuous(ctx, t, src, dst, batch)
	testutil.Eventually(t, "idle", func() bool { return rep.Status().State == sync.StateIdle })
	docs := make([]*couchdoc.Doc, burst)
	for i := range docs {
		docs[i] = &couchdoc.Doc{ID: fmt.Sprintf("d%02d", i), Body: json.RawMessage(`{}`)}
	}
	if _, err := src.BulkDocs(ctx, docs, true); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "every document of the burst on the target", func() bool {
		info, err := dst.Info(ctx)
		return err == nil && info.DocCount == burst
	})
}

// startContinuous starts a continuous replication between two stores,
// stopped when the test ends.
func startContinuous(ctx context.Context, t *testing.T, src, dst *localdb.DB, batch int) *sync.Replicator {
	t.Helper()
	rep, err := sync.New(sync.Options{Source: localpeer.New(src), Target: localpeer.New(dst), Continuous: true, BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rep.Stop() })
	return rep
}
