package main

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// BenchmarkIndexWrite runs phase index-write's modes on
// SETTEE_INDEX_WRITE_DOCS documents (default 20,000) per iteration: a
// profile of the phase (its BulkDocs calls carry the pprof label store=plain
// or store=indexed).
func BenchmarkIndexWrite(b *testing.B) {
	n := 20_000
	if v := os.Getenv("SETTEE_INDEX_WRITE_DOCS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"replicated", "app"} {
		b.Run(mode, func(b *testing.B) {
			var plain, indexed, cpuPlain, cpuIndexed, floor float64
			for range b.N {
				r, err := indexWrite(context.Background(), b.TempDir(), &Dataset{Seed: 1, Docs: n}, mode)
				if err != nil {
					b.Fatal(err)
				}
				plain += r.PlainSeconds
				indexed += r.IndexedSeconds
				cpuPlain += r.PlainCPUSeconds
				cpuIndexed += r.IndexedCPUSeconds
				floor += r.FloorSeconds
			}
			b.ReportMetric(plain/(plain+floor), "best-ratio")
			b.ReportMetric(plain/indexed, "ratio")
			b.ReportMetric(cpuPlain/cpuIndexed, "cpu-ratio")
			b.ReportMetric(float64(b.N*n)/plain, "docs/s-plain")
			b.ReportMetric(float64(b.N*n)/indexed, "docs/s-3idx")
		})
	}
}

// TestIndexWrite checks the phase writes every revision into both stores
// and that the indexed store's figures are its own.
func TestIndexWrite(t *testing.T) {
	ds := &Dataset{Seed: 1, Docs: 300}
	want := 0
	for i := range ds.Count() {
		want += len(ds.Doc(i).Leaves)
	}
	r, err := indexWrite(context.Background(), t.TempDir(), ds, "replicated")
	if err != nil {
		t.Fatal(err)
	}
	if r.Docs != want || r.PlainSeconds <= 0 || r.IndexedSeconds <= 0 || r.Ratio <= 0 || r.FloorSeconds <= 0 || r.BestRatio <= 0 || r.BestRatio >= 1 {
		t.Fatalf("run %+v, want %d revisions", r, want)
	}
}
