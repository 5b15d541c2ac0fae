package wire

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// BenchmarkWriteMixedDocs writes a multipart/mixed _bulk_get answer of 500
// documents of about 1 KB without attachments, as settee serve does for a
// pull.
func BenchmarkWriteMixedDocs(b *testing.B) {
	const docs = 500
	all := make([]*couchdoc.Doc, docs)
	for i := range all {
		body := fmt.Sprintf(`{"n":%d,"name":"document %d","text":%q}`, i, i, strings.Repeat("lorem ipsum ", 80))
		all[i] = &couchdoc.Doc{ID: fmt.Sprintf("doc-%06d", i), Rev: "2-" + strings.Repeat("b", 32), Body: []byte(body),
			Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{strings.Repeat("b", 32), strings.Repeat("a", 32)}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		mw := NewMixedWriter(io.Discard)
		mw.DocHeaders = true
		for _, d := range all {
			if err := mw.WriteDoc(d); err != nil {
				b.Fatal(err)
			}
		}
		if err := mw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(docs*b.N)/b.Elapsed().Seconds(), "docs/s")
}
