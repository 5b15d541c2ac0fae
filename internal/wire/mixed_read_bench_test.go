package wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// BenchmarkReadMixedDocs reads a multipart/mixed _bulk_get answer of 500
// documents of about 1 KB without attachments, as settee serve writes it
// for a pull (a JSON part each): the reader's allocations per document
// weigh on a pull's garbage collection.
func BenchmarkReadMixedDocs(b *testing.B) {
	var buf bytes.Buffer
	mw := NewMixedWriter(&buf)
	mw.DocHeaders = true
	const docs = 500
	for i := range docs {
		body := fmt.Sprintf(`{"n":%d,"name":"document %d","text":%q}`, i, i, strings.Repeat("lorem ipsum ", 80))
		doc := &couchdoc.Doc{ID: fmt.Sprintf("doc-%06d", i), Rev: "2-" + strings.Repeat("b", 32), Body: []byte(body),
			Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{strings.Repeat("b", 32), strings.Repeat("a", 32)}}}
		if err := mw.WriteDoc(doc); err != nil {
			b.Fatal(err)
		}
	}
	mw.Close()
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := ReadMultipart(bytes.NewReader(data), mw.ContentType(), func(d *couchdoc.Doc, _ error) error {
			n++
			return nil
		})
		if err != nil || n != docs {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(docs*b.N)/b.Elapsed().Seconds(), "docs/s")
}
