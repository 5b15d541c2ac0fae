package sync

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestThrottle: a throttled replication writes in units of a tenth of its
// rate and takes as long as its documents need past the first second's
// worth; the same replication without it is not held back.
func TestThrottle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	src := newMemPeer("src")
	for i := 0; i < 300; i++ {
		src.put(fmt.Sprintf("d%03d", i), "", `{}`)
	}
	for _, throttle := range []int{0, 100} {
		tgt := newMemPeer("tgt")
		start := time.Now()
		res, err := Replicate(ctx, Options{Source: src, Target: tgt, Throttle: throttle})
		took := time.Since(start)
		if err != nil || res.Stats.DocsWritten != 300 {
			t.Fatalf("throttle %d: %+v %v", throttle, res, err)
		}
		calls := tgt.count("BulkDocs")
		switch throttle {
		case 0:
			if took > 1500*time.Millisecond {
				t.Errorf("unthrottled: %s", took)
			}
		default:
			// 100 documents at once, then 200 at 100 a second.
			if took < 1800*time.Millisecond || took > 10*time.Second {
				t.Errorf("throttled at 100 docs/s: 300 docs in %s, want about 2 s", took)
			}
			if calls < 30 {
				t.Errorf("throttled at 100 docs/s: %d _bulk_docs calls, want units of at most 10 docs (30+)", calls)
			}
		}
	}
}
