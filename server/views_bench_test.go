package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/settee/settee/internal/procstat"
)

// BenchmarkBulkDocsValidated is BenchmarkBulkDocs with a
// validate_doc_update in the database (the target: at most 1.5x
// the cost of the same writes without one), and without for comparison.
func BenchmarkBulkDocsValidated(b *testing.B) {
	// small: a few members; 1k: about the size and mix (nested objects,
	// arrays, non-ASCII text) of the bench harness's documents.
	bodies := map[string]func(n int) map[string]any{
		"small": func(n int) map[string]any {
			return map[string]any{"_id": fmt.Sprintf("d%09d", n), "n": n, "text": "some body text to store"}
		},
		"1k": func(n int) map[string]any {
			return map[string]any{"_id": fmt.Sprintf("d%09d", n), "n": n, "name": "maple smörgås", "tags": []string{"mosaic"},
				"address": map[string]any{"street": "392 raven street", "city": "東京", "geo": []float64{36.282427, -146.046705}},
				"notes":   strings.Repeat("yarrow indigo onyx timber meadow stone Ελλάδα mañana hazel garnet ", 12)}
		},
	}
	for _, size := range []string{"small", "1k"} {
		for _, vdu := range []bool{false, true} {
			b.Run(fmt.Sprintf("doc=%s/vdu=%v", size, vdu), func(b *testing.B) {
				ts := newTServer(b, Config{})
				ts.must(201, "PUT", "/db", nil)
				if vdu {
					ts.must(201, "PUT", "/db/_design/v", map[string]any{
						"validate_doc_update": "function (newDoc, oldDoc, userCtx) { if (typeof newDoc.n !== 'number') throw({forbidden: 'n must be a number'}); }",
					})
				}
				n := 0
				b.ResetTimer()
				cpu0 := procstat.CPU()
				for i := 0; i < b.N; i++ {
					docs := make([]map[string]any, 100)
					for j := range docs {
						docs[j] = bodies[size](n)
						n++
					}
					ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": docs})
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "docs/s")
				// The process's CPU (client and server): on a shared machine,
				// wall time stretches with the load, CPU time much less.
				b.ReportMetric(float64((procstat.CPU()-cpu0).Microseconds())/float64(n), "cpu-us/doc")
			})
		}
	}
}
