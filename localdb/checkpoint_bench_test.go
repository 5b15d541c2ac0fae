package localdb_test

import (
	"crypto/md5"
	"encoding/base64"
	"math/rand"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/procstat"
)

// pullBatch is a pull's batch: 260 replicated 1-KB documents, 3 of them
// with a 200 KB attachment (the bench dataset's mix).
func pullBatch(start int, rng *rand.Rand) []*couchdoc.Doc {
	docs := replBatch(start, 260)
	for _, d := range docs[:3] {
		data := make([]byte, 200<<10)
		rng.Read(data)
		sum := md5.Sum(data)
		d.Attachments = map[string]*couchdoc.Attachment{"a.bin": {Name: "a.bin",
			ContentType: "application/octet-stream", Digest: "md5-" + base64.StdEncoding.EncodeToString(sum[:]),
			Length: int64(len(data)), RevPos: 1, Data: data}}
	}
	return docs
}

// BenchmarkWALCheckpoints writes a pull's batches (pullBatch) with
// SQLite's auto-checkpoint inside the commit (inline, the old behaviour)
// and with the background checkpointer: docs/s is the writer's rate,
// cpu-ms/op the process's CPU per batch (the batches' generation
// included, the same in both). Run with -benchtime 200x.
func BenchmarkWALCheckpoints(b *testing.B) {
	for _, mode := range []string{"inline", "background"} {
		b.Run(mode, func(b *testing.B) {
			db := benchDB(b)
			if mode == "inline" {
				if err := db.InlineCheckpoints(1000); err != nil {
					b.Fatal(err)
				}
			}
			rng := rand.New(rand.NewSource(1))
			const n = 260
			b.ResetTimer()
			cpu0 := procstat.CPU()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				docs := pullBatch(i*n, rng)
				b.StartTimer()
				res, err := db.BulkDocs(bg, docs, false)
				if err != nil || !res[n-1].OK {
					b.Fatal(err, res[n-1])
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
			b.ReportMetric(float64((procstat.CPU()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}
