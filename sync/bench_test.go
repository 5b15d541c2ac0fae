package sync_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

const benchDocs = 10000

// put1KB fills a store with benchDocs documents of about 1 KB.
func put1KB(b *testing.B, db *localdb.DB) {
	pad := strings.Repeat("x", 1000)
	docs := make([]*couchdoc.Doc, 0, 1000)
	for i := range benchDocs {
		docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("doc%06d", i), Body: []byte(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, pad))})
		if len(docs) == cap(docs) {
			if _, err := db.BulkDocs(context.Background(), docs, true); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
}

// peakHeap samples the live heap every 5 ms until stop is called and
// returns the highest value seen, in bytes.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

// newDBFunc creates a fresh remote database and returns its URL.
type newDBFunc func(b *testing.B, name string) string

func pouchDBs(b *testing.B) newDBFunc {
	srv := testpeer.PouchDB(b)
	return func(b *testing.B, name string) string { return srv.CreateDB(b, name) }
}

func serverDBs(b *testing.B) newDBFunc {
	srv := servertest.Start(b, nil)
	return func(b *testing.B, name string) string { return srv.CreateDB(b, name) }
}

func benchReplicate(b *testing.B, newDB newDBFunc, push bool) {
	seed := localdbtest.OpenNamed(b, "seed", nil)
	put1KB(b, seed)
	var peak uint64
	var elapsed, cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		u := newDB(b, fmt.Sprintf("bench%d", i))
		local := localdbtest.OpenNamed(b, fmt.Sprintf("l%d", i), nil)
		var opts sync.Options
		if push {
			opts = sync.Options{Source: synctest.Local(seed), Target: synctest.Remote(b, u, nil)}
		} else {
			if _, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Local(seed), Target: synctest.Remote(b, u, nil)}); err != nil {
				b.Fatal(err)
			}
			opts = sync.Options{Source: synctest.Remote(b, u, nil), Target: synctest.Local(local)}
		}
		runtime.GC()
		stop := peakHeap()
		start, cpu0 := time.Now(), processCPU()
		b.StartTimer()
		res, err := sync.Replicate(context.Background(), opts)
		b.StopTimer()
		elapsed += time.Since(start)
		cpu += processCPU() - cpu0
		peak = max(peak, stop())
		if err != nil || res.Stats.DocsWritten != benchDocs {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.ReportMetric(float64(benchDocs*b.N)/elapsed.Seconds(), "docs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	// The process's CPU (client and, for our server, the server too) per
	// replication: steadier than docs/s on a machine shared with other work.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkPull10k(b *testing.B) { benchReplicate(b, pouchDBs(b), false) }
func BenchmarkPush10k(b *testing.B) { benchReplicate(b, pouchDBs(b), true) }

func BenchmarkPull10kServer(b *testing.B) { benchReplicate(b, serverDBs(b), false) }
func BenchmarkPush10kServer(b *testing.B) { benchReplicate(b, serverDBs(b), true) }

// BenchmarkLocalToLocal replicates between two stores (no HTTP): the
// replicator's own overhead, and whether its memory stays flat as the
// database grows.
func BenchmarkLocalToLocal(b *testing.B) {
	for _, n := range []int{10000, 40000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := localdbtest.OpenNamed(b, "src", nil)
			pad := strings.Repeat("x", 1000)
			docs := make([]*couchdoc.Doc, 0, 1000)
			for i := range n {
				docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("doc%06d", i), Body: []byte(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, pad))})
				if len(docs) == cap(docs) {
					if _, err := src.BulkDocs(context.Background(), docs, true); err != nil {
						b.Fatal(err)
					}
					docs = docs[:0]
				}
			}
			var peak uint64
			var elapsed time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dst := localdbtest.OpenNamed(b, fmt.Sprintf("dst%d", i), nil)
				runtime.GC()
				stop := peakHeap()
				start := time.Now()
				b.StartTimer()
				res, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Local(src), Target: synctest.Local(dst)})
				b.StopTimer()
				elapsed += time.Since(start)
				peak = max(peak, stop())
				if err != nil || res.Stats.DocsWritten != int64(n) {
					b.Fatalf("%v %+v", err, res)
				}
			}
			b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "docs/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// notInline hides the local store's InlineWriter capability: the baseline
// of BenchmarkMidSizeAttachments, where every such document goes alone.
type notInline struct{ sync.Peer }

// BenchmarkMidSizeAttachments replicates 300 documents with one 100 KiB
// or 500 KiB attachment each between two stores: batched into the
// InlineWriter target ("batched") against one PutDoc per document
// ("alone"), in the same run.
func BenchmarkMidSizeAttachments(b *testing.B) {
	const n = 300
	for _, size := range []int{100 << 10, 500 << 10} {
		src := localdbtest.OpenNamed(b, fmt.Sprintf("src%d", size), nil)
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		for i := range n {
			data[0], data[1] = byte(i), byte(i>>8) // distinct contents
			doc := &couchdoc.Doc{ID: fmt.Sprintf("doc%04d", i), Body: []byte(`{}`),
				Attachments: map[string]*couchdoc.Attachment{"a.bin": {ContentType: "application/octet-stream", Data: append([]byte(nil), data...)}}}
			if _, err := src.Put(context.Background(), doc); err != nil {
				b.Fatal(err)
			}
		}
		for _, mode := range []string{"batched", "alone"} {
			b.Run(fmt.Sprintf("%dKiB/%s", size>>10, mode), func(b *testing.B) {
				var elapsed time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					dst := localdbtest.OpenNamed(b, fmt.Sprintf("dst-%d-%s-%d", size, mode, i), nil)
					var tgt sync.Peer = synctest.Local(dst)
					if mode == "alone" {
						tgt = notInline{tgt}
					}
					start := time.Now()
					b.StartTimer()
					res, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Local(src), Target: tgt})
					b.StopTimer()
					elapsed += time.Since(start)
					if err != nil || res.Stats.DocsWritten != n {
						b.Fatalf("%v %+v", err, res)
					}
				}
				b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "docs/s")
			})
		}
	}
}
