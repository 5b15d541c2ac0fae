package query_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkFindVsPouchDB runs the two queries of BenchmarkFind on the same
// 100k orders with the same indexes in pouchdb-find (pouchdb-node, leveldb)
// and here, in the same run, and reports both p50 latencies and how many
// times faster we are. It needs node and node_modules/pouchdb-node and
// pouchdb-find at the module root, and SETTEE_POUCHDB_BENCH=1 (loading
// PouchDB takes a minute). b.N is the number of queries of each kind.
func BenchmarkFindVsPouchDB(b *testing.B) {
	if os.Getenv("SETTEE_POUCHDB_BENCH") != "1" {
		b.Skip("set SETTEE_POUCHDB_BENCH=1 to run against pouchdb-find")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("no node")
	}
	for _, m := range []string{"pouchdb-node", "pouchdb-find"} {
		if _, err := os.Stat(filepath.Join("..", "..", "node_modules", m)); err != nil {
			b.Skipf("no node_modules/%s", m)
		}
	}
	n := max(b.N, 50)
	out, err := exec.Command(node, filepath.Join("testdata", "pouchfind_bench.js"),
		filepath.Join(b.TempDir(), "pouch"), fmt.Sprint(benchDocs), fmt.Sprint(n)).Output()
	if err != nil {
		b.Fatalf("pouchdb: %v", err)
	}
	var pouch struct {
		Eq    float64 `json:"eq20_p50_ms"`
		Range float64 `json:"range_p50_ms"`
		Load  float64 `json:"load_s"`
	}
	if err := json.Unmarshal(out, &pouch); err != nil {
		b.Fatalf("pouchdb said %s: %v", out, err)
	}
	db := benchStore(b)
	eq := p50Of(b, db, n, 20, func(i int) string {
		return fmt.Sprintf(`{"selector": {"customer": "c%04d"}}`, (i*7919)%5000)
	})
	rng := p50Of(b, db, n, 20, func(i int) string {
		return fmt.Sprintf(`{"selector": {"status": "paid", "when": {"$gt": %d}}, "sort": [{"status": "desc"}, {"when": "desc"}], "limit": 20}`, 1000+(i*7919)%90000)
	})
	b.ReportMetric(eq, "eq20-p50-ms")
	b.ReportMetric(pouch.Eq, "pouch-eq20-p50-ms")
	b.ReportMetric(pouch.Eq/eq, "eq20-x-faster")
	b.ReportMetric(rng, "range-p50-ms")
	b.ReportMetric(pouch.Range, "pouch-range-p50-ms")
	b.ReportMetric(pouch.Range/rng, "range-x-faster")
}
