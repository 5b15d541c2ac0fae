package wire

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// bulkGetAnswer is a _bulk_get answer of n documents of about 1 KB as
// pouchdb-server sends them (revs=true), every tenth with a small inline
// attachment and one missing revision.
func bulkGetAnswer(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"results":[`)
	att := bytes.Repeat([]byte("0123456789"), 40)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		id := fmt.Sprintf("doc-%06d", i)
		fmt.Fprintf(&b, `{"id":"%s","docs":[{"ok":{"_id":"%s","_rev":"3-9f2c1b7e4d5a6f708192a3b4c5d6e7f8","type":"order","customer":{"name":"Zoë Müller","email":"zoe@example.com","tier":3},"items":[`, id, id)
		for k := 0; k < 6; k++ {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"sku":"SKU-%05d","qty":%d,"price":%d.%02d,"tags":["a","b%d"],"note":"line \"%d\" ok"}`, k*37, k+1, k*3+1, k*7%100, k, k)
		}
		b.WriteString(`],"total":123.45,"paid":true,"shipped":null,"notes":"` + strings.Repeat("lorem ipsum dolor sit amet ", 8) + `"`)
		if i%10 == 0 {
			fmt.Fprintf(&b, `,"_attachments":{"r.txt":{"content_type":"text/plain","revpos":2,"digest":"%s","length":%d,"data":"%s"}}`,
				md5Digest(att), len(att), base64.StdEncoding.EncodeToString(att))
		}
		b.WriteString(`,"_revisions":{"start":3,"ids":["9f2c1b7e4d5a6f708192a3b4c5d6e7f8","8e1b0a6d3c4f5e6071829304a5b6c7d8","7d0a9f5c2b3e4d5f60718293a4b5c6d7"]}}}]}`)
	}
	b.WriteString(`,{"id":"gone","docs":[{"error":{"id":"gone","rev":"1-a","error":"not_found","reason":"missing"}}]}]}`)
	return b.Bytes()
}

// BenchmarkReadBulkGet compares the streaming reader with the json.Decoder
// one it replaced (both with the one-pass couchdoc.ParseDoc).
func BenchmarkReadBulkGet(b *testing.B) {
	b.Run("stream", func(b *testing.B) { benchmarkBulkGet(b, ReadBulkGet) })
	b.Run("decoder", func(b *testing.B) { benchmarkBulkGet(b, refReadBulkGet) })
}

func benchmarkBulkGet(b *testing.B, read func(io.Reader, DocFunc) error) {
	const docs = 200
	data := bulkGetAnswer(docs)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := read(bytes.NewReader(data), func(d *couchdoc.Doc, e error) error {
			if d != nil {
				n++
			}
			return nil
		})
		if err != nil || n != docs {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(docs*b.N)/b.Elapsed().Seconds(), "docs/s")
}
