package wire

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

func BenchmarkReadChanges(b *testing.B) {
	const rows = 10000
	data := feedBody(rows, false)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if _, _, err := ReadChangesPending(bytes.NewReader(data), func(*couchdoc.Change) error { n++; return nil }); err != nil || n != rows {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

// feedBody is a normal changes feed of rows rows with CouchDB-like seqs,
// each with a 1-KB document when docs is set.
func feedBody(rows int, docs bool) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"results":[`)
	for i := 0; i < rows; i++ {
		if i > 0 {
			buf.WriteString(",\n")
		}
		fmt.Fprintf(&buf, `{"seq":"%d-g1AAAAG3eJzLYWBgYMlgTmGQT0lKzi9KdUhJMtbLSs1LLUst0k","id":"doc-%08d","changes":[{"rev":"1-%032x"}]`, i+1, i, i)
		if docs {
			fmt.Fprintf(&buf, `,"doc":{"_id":"doc-%08d","_rev":"1-%032x","n":%d,"tags":["a","b"],"nested":{"x":1.5,"y":[true,null]},"text":"%s"}`,
				i, i, i, strings.Repeat("lorem ipsum ", 80))
		}
		buf.WriteString("}")
	}
	fmt.Fprintf(&buf, `],"last_seq":"%d-g1AAAA","pending":0}`, rows)
	return buf.Bytes()
}

func BenchmarkMultipartRoundTrip(b *testing.B) {
	att := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	var buf bytes.Buffer
	mw := NewMixedWriter(&buf)
	const docs = 8
	for i := 0; i < docs; i++ {
		doc := &couchdoc.Doc{ID: fmt.Sprintf("d%d", i), Rev: "1-" + strings.Repeat("a", 32), Body: []byte(`{"x":1}`),
			Attachments: map[string]*couchdoc.Attachment{"a.bin": {Body: bytes.NewReader(att), Length: int64(len(att)), Digest: md5Digest(att)}}}
		if err := mw.WriteDoc(doc); err != nil {
			b.Fatal(err)
		}
	}
	mw.Close()
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		err := ReadMultipart(bytes.NewReader(data), mw.ContentType(), func(d *couchdoc.Doc, _ error) error {
			n++
			_, err := io.Copy(io.Discard, d.Attachments["a.bin"].Body)
			return err
		})
		if err != nil || n != docs {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(docs*b.N)/b.Elapsed().Seconds(), "docs/s")
}
