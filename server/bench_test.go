package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// BenchmarkBulkDocs writes batches of 100 new documents over HTTP.
func BenchmarkBulkDocs(b *testing.B) {
	ts := newTServer(b, Config{})
	ts.must(201, "PUT", "/db", nil)
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		docs := make([]map[string]any, 100)
		for j := range docs {
			docs[j] = map[string]any{"_id": fmt.Sprintf("d%09d", n), "n": n, "text": "some body text to store"}
			n++
		}
		ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": docs})
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkChangesFeed reads a 2000-row changes feed with include_docs.
func BenchmarkChangesFeed(b *testing.B) {
	ts := newTServer(b, Config{})
	ts.must(201, "PUT", "/db", nil)
	for k := 0; k < 20; k++ {
		docs := make([]map[string]any, 100)
		for j := range docs {
			docs[j] = map[string]any{"_id": fmt.Sprintf("d%05d", k*100+j), "n": j}
		}
		ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": docs})
	}
	b.ResetTimer()
	rows := 0
	for i := 0; i < b.N; i++ {
		res, err := http.Get(ts.url + "/db/_changes?style=all_docs&include_docs=true")
		if err != nil {
			b.Fatal(err)
		}
		var a struct{ Results []json.RawMessage }
		if err := json.NewDecoder(res.Body).Decode(&a); err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		rows += len(a.Results)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkAttachmentRoundTrip uploads and downloads a 1 MiB attachment.
func BenchmarkAttachmentRoundTrip(b *testing.B) {
	ts := newTServer(b, Config{})
	ts.must(201, "PUT", "/db", nil)
	data := bytes.Repeat([]byte("abcdefgh"), 1<<17)
	b.SetBytes(int64(2 * len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		path := fmt.Sprintf("/db/doc%d/blob", i)
		ts.must(201, "PUT", path, data, "Content-Type", "application/octet-stream")
		res, err := http.Get(ts.url + path)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if n != int64(len(data)) {
			b.Fatalf("read %d bytes", n)
		}
	}
}
