package localdb_test

import (
	"os"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

// BenchmarkShrinkAfterPurge measures the figure: 100k 1-KB docs,
// 90% deleted then purged, compacted; the file against a fresh store
// holding the 10k that remain (sizes in MB, and their ratio). Run with
// -benchtime=1x: each iteration rebuilds both stores.
func BenchmarkShrinkAfterPurge(b *testing.B) {
	const total, keep = 100_000, 10_000
	for i := 0; i < b.N; i++ {
		db := benchDB(b)
		fresh := benchDB(b)
		revs := make(map[string]string, total)
		for start := 0; start < total; start += 1000 {
			batch := replBatch(start, 1000)
			if _, err := db.BulkDocs(bg, batch, false); err != nil {
				b.Fatal(err)
			}
			for _, d := range batch {
				revs[d.ID] = d.Rev
			}
			if start < keep {
				if _, err := fresh.BulkDocs(bg, batch, false); err != nil {
					b.Fatal(err)
				}
			}
		}
		full := statSize(b, db.Path())
		// Delete the other 90%, then purge their tombstones.
		for start := keep; start < total; start += 1000 {
			var dels []*couchdoc.Doc
			for _, d := range replBatch(start, 1000) {
				dels = append(dels, &couchdoc.Doc{ID: d.ID, Rev: revs[d.ID], Deleted: true})
			}
			res, err := db.BulkDocs(bg, dels, true)
			if err != nil {
				b.Fatal(err)
			}
			for off := 0; off < len(res); off += 100 {
				req := make(map[string][]string, 100)
				for _, r := range res[off : off+100] {
					req[r.ID] = []string{r.Rev}
				}
				if _, err := db.Purge(bg, req); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := db.Compact(bg); err != nil {
			b.Fatal(err)
		}
		if err := fresh.Compact(bg); err != nil {
			b.Fatal(err)
		}
		if err := db.CheckInvariants(bg); err != nil {
			b.Fatal(err)
		}
		info, _ := db.Info(bg)
		if info.DocCount != keep || info.DocDelCount != 0 {
			b.Fatalf("info %+v", info)
		}
		after, want := statSize(b, db.Path()), statSize(b, fresh.Path())
		b.ReportMetric(float64(full)/1e6, "full-MB")
		b.ReportMetric(float64(after)/1e6, "compacted-MB")
		b.ReportMetric(float64(want)/1e6, "fresh-MB")
		b.ReportMetric(float64(after)/float64(want), "ratio")
	}
}

func statSize(b *testing.B, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkSizes100k is the cost GET /{db} now pays for its sizes, on a
// store of 100k 1-KB documents, against Info (its baseline) in the same
// run.
func BenchmarkSizes100k(b *testing.B) {
	db := benchDB(b)
	for start := 0; start < 100_000; start += 1000 {
		if _, err := db.BulkDocs(bg, replBatch(start, 1000), false); err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now()
	for range 10 {
		if _, err := db.Info(bg); err != nil {
			b.Fatal(err)
		}
	}
	info := time.Since(t0) / 10
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.Sizes(bg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "sizes-ms")
	b.ReportMetric(float64(info.Microseconds())/1000, "info-ms")
}
