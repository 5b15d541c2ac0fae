package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
	"github.com/settee/settee/sync/synctest"
)

// uncounted is the local peer without pending counts: the baseline of
// BenchmarkPendingCounts.
type uncounted struct {
	*localpeer.Peer
	PendingChanges struct{} // shadows the method: not a sync.PendingCounter
}

func (u uncounted) Changes(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	opts.OnPending = nil
	return u.Peer.Changes(ctx, opts, fn)
}

// BenchmarkPendingCounts measures what exact pending counts cost a push
// between two stores (a count of the seq index after each batch read):
// docs/s with and without, in the same run.
func BenchmarkPendingCounts(b *testing.B) {
	const n = 40000
	src := localdbtest.OpenNamed(b, "src", nil)
	synctest.PutDocs(b, src, "d", n)
	for _, counted := range []bool{false, true} {
		b.Run(fmt.Sprintf("counted=%v", counted), func(b *testing.B) {
			var elapsed time.Duration
			for i := 0; i < b.N; i++ {
				dst := localdbtest.OpenNamed(b, fmt.Sprintf("dst%d", i), nil)
				var source sync.Peer = localpeer.New(src)
				if !counted {
					source = uncounted{Peer: localpeer.New(src)}
				}
				start := time.Now()
				res, err := sync.Replicate(context.Background(), sync.Options{Source: source, Target: synctest.Local(dst)})
				elapsed += time.Since(start)
				if err != nil || res.Stats.DocsWritten != n {
					b.Fatalf("%v %+v", err, res)
				}
			}
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "docs/s")
		})
	}
}
