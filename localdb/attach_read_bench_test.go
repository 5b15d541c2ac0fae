package localdb_test

import (
	"io"
	"math/rand"
	"testing"
)

// BenchmarkStreamAttachments reads the attachments of a pull's batch
// (pullBatch: three of 200 KB) through OpenAttachment, as settee serve
// streams them to a replication: one op reads all three.
func BenchmarkStreamAttachments(b *testing.B) {
	db := benchDB(b)
	docs := pullBatch(0, rand.New(rand.NewSource(1)))
	if _, err := db.BulkDocs(bg, docs, false); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs[:3] {
			_, body, err := db.OpenAttachment(bg, d.ID, "", "a.bin")
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.CopyBuffer(io.Discard, body, buf)
			body.Close()
			if err != nil || n != 200<<10 {
				b.Fatal(n, err)
			}
		}
	}
}
