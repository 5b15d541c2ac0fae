package localdb_test

import (
	"testing"

	"github.com/settee/settee/localdb"
)

// BenchmarkOpenRevsBatchPull answers _bulk_get-sized requests (100
// documents of 1 KB, one revision each, latest) from a 20,000-document
// store, as settee serve does for a pull: us/doc and allocations per op.
func BenchmarkOpenRevsBatchPull(b *testing.B) {
	db := benchDB(b)
	var all []localdb.RevsRequest
	for k := 0; k < 20; k++ {
		docs := replBatch(k*1000, 1000)
		if _, err := db.BulkDocs(bg, docs, false); err != nil {
			b.Fatal(err)
		}
		for _, d := range docs {
			all = append(all, localdb.RevsRequest{ID: d.ID, Revs: []string{d.Rev}})
		}
	}
	opts := localdb.GetOptions{Revs: true, Latest: true, Attachments: true}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reqs := all[(i%200)*100 : (i%200+1)*100]
		n := 0
		if err := db.OpenRevsBatch(bg, reqs, opts, func(id string, r localdb.OpenRev, err error) error { n++; return nil }); err != nil || n != 100 {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*100), "us/doc")
}
