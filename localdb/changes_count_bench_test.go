package localdb_test

import (
	"testing"
)

// BenchmarkPendingChangesFeed asks PendingChanges as settee serve does for
// a replication reading 100,000 documents in batches of 500 (after every
// _changes request): one op is the whole feed's 200 answers.
func BenchmarkPendingChangesFeed(b *testing.B) {
	db := benchDB(b)
	const docs, batch = 100_000, 500
	for start := 0; start < docs; start += 5000 {
		if _, err := db.BulkDocs(bg, replBatch(start, 5000), false); err != nil {
			b.Fatal(err)
		}
	}
	info, err := db.Info(bg)
	if err != nil {
		b.Fatal(err)
	}
	top := info.UpdateSeq
	b.ResetTimer()
	for range b.N {
		for seq := int64(batch); seq <= top; seq += batch {
			n, err := db.PendingChanges(bg, seq)
			if err != nil {
				b.Fatal(err)
			}
			if n != top-seq {
				b.Fatalf("PendingChanges(%d) = %d, want %d", seq, n, top-seq)
			}
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1000, "ms/feed")
}
