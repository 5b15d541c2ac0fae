package sync_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// BenchmarkLazyPull pulls 1,000 documents, 100 of them with a 100 KiB
// attachment, from settee serve into a fresh store: every body (eager),
// none (lazy) or those of at most 4 KiB (lazy-over, none here), in the
// same run, reporting bytes received and time per pull.
func BenchmarkLazyPull(b *testing.B) {
	const n, withAtt, size = 1000, 100, 100 << 10
	newDB := serverDBs(b)
	seed := localdbtest.OpenNamed(b, "seed", nil)
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 13)
	}
	for i := range n {
		doc := &couchdoc.Doc{ID: fmt.Sprintf("doc%05d", i), Body: []byte(fmt.Sprintf(`{"i":%d}`, i))}
		if i%(n/withAtt) == 0 {
			data[0], data[1] = byte(i), byte(i>>8)
			doc.Attachments = map[string]*couchdoc.Attachment{"photo.jpg": {ContentType: "image/jpeg", Data: append([]byte(nil), data...)}}
		}
		if _, err := seed.Put(context.Background(), doc); err != nil {
			b.Fatal(err)
		}
	}
	u := newDB(b, "photos")
	if _, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Local(seed), Target: synctest.Remote(b, u, nil)}); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []sync.Attachments{sync.Eager, sync.Lazy, sync.LazyOver(4 << 10)} {
		b.Run(mode.String(), func(b *testing.B) {
			var elapsed time.Duration
			var bytes int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dst := localdbtest.OpenNamed(b, fmt.Sprintf("dst-%s-%d", mode, i), nil)
				cnt := &synctest.Counter{}
				start := time.Now()
				b.StartTimer()
				res, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Remote(b, u, cnt), Target: synctest.Local(dst), Attachments: mode})
				b.StopTimer()
				elapsed += time.Since(start)
				bytes += cnt.Bytes()
				if err != nil || res.Stats.DocsWritten != n {
					b.Fatalf("%v %+v", err, res)
				}
			}
			b.ReportMetric(float64(bytes)/float64(b.N)/(1<<20), "MB-received/op")
			b.ReportMetric(elapsed.Seconds()*1000/float64(b.N), "ms/pull")
		})
	}
}
