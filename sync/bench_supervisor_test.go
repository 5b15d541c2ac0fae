package sync_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// BenchmarkSupervisorOverhead pulls benchDocs 1 KB documents between two
// local stores (no network, so the event path weighs the most it can) with
// sync.Replicate and with a Supervisor, both with an OnEvent: what the
// supervisor's queue and goroutine cost.
func BenchmarkSupervisorOverhead(b *testing.B) {
	seed := localdbtest.OpenNamed(b, "seed", nil)
	put1KB(b, seed)
	run := func(b *testing.B, viaSupervisor bool) {
		var events atomic.Int64
		opts := sync.Options{OnEvent: func(sync.Event) { events.Add(1) }}
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			tgt := localdbtest.OpenNamed(b, fmt.Sprintf("tgt%d", i), nil)
			b.StartTimer()
			var written int64
			if viaSupervisor {
				sup, err := sync.NewSupervisor(sync.SupervisorConfig{Local: synctest.Local(tgt), Remote: synctest.Local(seed),
					Direction: sync.Pull, Options: opts})
				if err != nil {
					b.Fatal(err)
				}
				if err := sup.Start(synctest.Ctx(b)); err != nil {
					b.Fatal(err)
				}
				if err := sup.Wait(); err != nil {
					b.Fatal(err)
				}
				written = sup.Status().Stats.DocsWritten
			} else {
				o := opts
				o.Source, o.Target = synctest.Local(seed), synctest.Local(tgt)
				res, err := sync.Replicate(synctest.Ctx(b), o)
				if err != nil {
					b.Fatal(err)
				}
				written = res.Stats.DocsWritten
			}
			if written != benchDocs {
				b.Fatalf("%d docs written, want %d", written, benchDocs)
			}
		}
		b.ReportMetric(float64(benchDocs*b.N)/b.Elapsed().Seconds(), "docs/s")
		b.ReportMetric(float64(events.Load())/float64(b.N), "events/op")
	}
	b.Run("replicate", func(b *testing.B) { run(b, false) })
	b.Run("supervisor", func(b *testing.B) { run(b, true) })
}
