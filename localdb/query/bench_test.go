package query_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/procstat"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// benchDocs is the size of the benchmarks' store, the bench harness's
// default document count.
const benchDocs = 100_000

// orderDoc is document i of the benchmark set: an order with a customer
// (5,000 customers, 20 orders each), a time and a status, ~300 bytes.
func orderDoc(i int) *couchdoc.Doc {
	h := md5.Sum([]byte(fmt.Sprint(i)))
	hash := hex.EncodeToString(h[:])
	body := fmt.Sprintf(`{"type":"order","customer":"c%04d","when":%d,"status":"%s","total":%d,"note":"%s"}`,
		i%5000, i, []string{"open", "paid", "shipped"}[i%3], i%997, strings.Repeat("x", 180))
	return &couchdoc.Doc{ID: fmt.Sprintf("order-%08d", i), Rev: "1-" + hash, Body: []byte(body),
		Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{hash}}}
}

func loadOrders(b *testing.B, db *localdb.DB, from, n int) {
	for start := from; start < from+n; start += 1000 {
		docs := make([]*couchdoc.Doc, 0, 1000)
		for i := start; i < min(start+1000, from+n); i++ {
			docs = append(docs, orderDoc(i))
		}
		if _, err := db.BulkDocs(bg, docs, false); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore is the 100k-order store with its indexes, made once per
// benchmark (b.TempDir is per benchmark).
func benchStore(b *testing.B) *localdb.DB {
	db, err := localdb.Open(filepath.Join(b.TempDir(), "orders.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	loadOrders(b, db, 0, benchDocs)
	if _, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": ["customer"]}, "ddoc": "o", "name": "customer"}`)); err != nil {
		b.Fatal(err)
	}
	if _, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": ["status", "when"]}, "ddoc": "o", "name": "status-when"}`)); err != nil {
		b.Fatal(err)
	}
	return db
}

// runQueries runs query(i) b.N times and reports the median latency.
func runQueries(b *testing.B, db *localdb.DB, want int, q func(i int) string) {
	b.ResetTimer()
	b.ReportMetric(p50Of(b, db, b.N, want, q), "p50-ms")
}

// p50Of runs query(i) n times, checking each returns want docs and no
// warning, and returns the median latency in ms.
func p50Of(b *testing.B, db *localdb.DB, n, want int, q func(i int) string) float64 {
	lat := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		res, err := query.Find(bg, db, []byte(q(i)))
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		if len(res.Docs) != want || res.Warning != "" {
			b.Fatalf("%s: %d docs, warning %q", q(i), len(res.Docs), res.Warning)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return float64(lat[len(lat)/2].Microseconds()) / 1000
}

// BenchmarkFind measures indexed queries on 100k documents: an equality
// returning 20 rows, and a range with a sort and a limit of 20.
func BenchmarkFind(b *testing.B) {
	db := benchStore(b)
	b.Run("eq-20", func(b *testing.B) {
		runQueries(b, db, 20, func(i int) string {
			return fmt.Sprintf(`{"selector": {"customer": "c%04d"}}`, (i*7919)%5000)
		})
	})
	b.Run("range-sort-limit-20", func(b *testing.B) {
		runQueries(b, db, 20, func(i int) string {
			return fmt.Sprintf(`{"selector": {"status": "paid", "when": {"$gt": %d}}, "sort": [{"status": "desc"}, {"when": "desc"}], "limit": 20}`, 1000+(i*7919)%90000)
		})
	})
}

// BenchmarkIndexBuild builds (and drops) an index over 100k documents.
func BenchmarkIndexBuild(b *testing.B) {
	db, err := localdb.Open(filepath.Join(b.TempDir(), "orders.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	loadOrders(b, db, 0, benchDocs)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": ["customer", "when"]}, "ddoc": "b", "name": "x"}`)); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := query.DeleteIndex(bg, db, "b", "x"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/build")
}

// BenchmarkBulkDocsIndexes writes batches of 1,000 new documents (as a pull
// replication does) into a store with no index, one whose keys grow with
// the writes, and three (two with keys spread over the whole index): the
// cost of keeping indexes in the write transaction.
func BenchmarkBulkDocsIndexes(b *testing.B) {
	for _, c := range []struct {
		name   string
		fields []string
	}{
		{"indexes=0", nil},
		{"indexes=1-sequential", []string{`["status", "when"]`}},
		{"indexes=3", []string{`["customer"]`, `["status", "when"]`, `["total"]`}},
	} {
		b.Run(c.name, func(b *testing.B) {
			db, err := localdb.Open(filepath.Join(b.TempDir(), "w.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for _, f := range c.fields {
				if _, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": `+f+`}}`)); err != nil {
					b.Fatal(err)
				}
			}
			w0 := bytesWritten(b)
			b.ResetTimer()
			loadOrders(b, db, 0, b.N*1000)
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "docs/s")
			b.ReportMetric(float64(bytesWritten(b)-w0)/float64(b.N*1000), "wchar/doc")
		})
	}
}

// BenchmarkBulkDocsIndexRatio writes the same batches of 1,000 new
// documents into a store without indexes and one with three (customer,
// status+when, total), alternating batch by batch so that both see the same
// machine load, and reports the indexed store's docs/s as a fraction of the
// other's: by wall time (ratio) and by the process's CPU time (cpu-ratio).
func BenchmarkBulkDocsIndexRatio(b *testing.B) {
	open := func(name string, fields ...string) *localdb.DB {
		db, err := localdb.Open(filepath.Join(b.TempDir(), name), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		for _, f := range fields {
			if _, err := query.CreateIndex(bg, db, []byte(`{"index": {"fields": `+f+`}}`)); err != nil {
				b.Fatal(err)
			}
		}
		return db
	}
	plain := open("plain.db")
	fields := []string{`["customer"]`, `["status", "when"]`, `["total"]`}
	if f := os.Getenv("SETTEE_BENCH_INDEXES"); f != "" {
		fields = strings.Split(f, ";")
	}
	indexed := open("indexed.db", fields...)
	var wall, cpu [2]time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, db := range []*localdb.DB{plain, indexed} {
			t0, c0 := time.Now(), procstat.CPU()
			pprof.Do(bg, pprof.Labels("store", []string{"plain", "indexed"}[k]), func(context.Context) {
				loadOrders(b, db, i*1000, 1000)
			})
			wall[k] += time.Since(t0)
			cpu[k] += procstat.CPU() - c0
		}
	}
	b.ReportMetric(float64(wall[0])/float64(wall[1]), "ratio")
	b.ReportMetric(float64(cpu[0])/float64(cpu[1]), "cpu-ratio")
	b.ReportMetric(float64(b.N*1000)/wall[0].Seconds(), "docs/s-plain")
	b.ReportMetric(float64(b.N*1000)/wall[1].Seconds(), "docs/s-3idx")
}

// BenchmarkObserveLatency measures the time from a commit's return to the
// live query's update (an update already computed when the commit returns
// counts as 0), on the 100k-order store: each op writes one document
// that enters the result of a query bounded to one customer.
func BenchmarkObserveLatency(b *testing.B) {
	db := benchStore(b)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	// The limit holds every document written: one past it would change
	// nothing in the result, and no update would come.
	ch, _ := query.ObserveChan(ctx, db, []byte(fmt.Sprintf(`{"selector": {"customer": "c0007"}, "limit": %d}`, 20+b.N)), nil)
	<-ch
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := orderDoc(benchDocs + i)
		d.Body = []byte(strings.Replace(string(d.Body), fmt.Sprintf(`"customer":"c%04d"`, (benchDocs+i)%5000), `"customer":"c0007"`, 1))
		if _, err := db.BulkDocs(bg, []*couchdoc.Doc{d}, false); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now() // the commit has returned
		u := <-ch
		lat = append(lat, time.Since(t0))
		if len(u.Changes) != 1 || u.Changes[0].Kind != "added" {
			b.Fatalf("update %+v", u.Changes)
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// bytesWritten is the bytes this process has passed to write calls
// (/proc/self/io wchar): a measure of the store's write volume that the
// machine's load does not skew.
func bytesWritten(b *testing.B) int64 {
	n, ok := procstat.IO("wchar")
	if !ok {
		b.Skip("no wchar in /proc/self/io")
	}
	return n
}
