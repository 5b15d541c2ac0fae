package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// BenchmarkFindBenchDocs times the find phase's queries through
// localdb/query on the bench's documents (1-KB bodies; attachments left
// out, the queries never read them), as the harness's settee contender
// does, without the harness's pull: a profile of the phase. The store has
// SETTEE_FIND_BENCH_DOCS documents (default 100,000); with
// SETTEE_FIND_BENCH_STORE it is kept in that file and reused.
func BenchmarkFindBenchDocs(b *testing.B) {
	ctx := context.Background()
	db := findBenchStore(b, ctx)
	eq, rng := findQueries(1000)
	for _, shape := range []struct {
		name string
		qs   []string
	}{{"eq", eq}, {"range", rng}} {
		b.Run(shape.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := query.Find(ctx, db, []byte(shape.qs[i%len(shape.qs)])); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		})
	}
}

// findBenchStore opens the benchmark's store, loading the dataset and
// building the find phase's indexes when the file is new.
func findBenchStore(b *testing.B, ctx context.Context) *localdb.DB {
	n := 100_000
	if v := os.Getenv("SETTEE_FIND_BENCH_DOCS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	path := os.Getenv("SETTEE_FIND_BENCH_STORE")
	if path == "" {
		path = filepath.Join(b.TempDir(), "find.db")
	}
	_, statErr := os.Stat(path)
	db, err := localdb.Open(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if statErr == nil {
		return db
	}
	ds := &Dataset{Seed: 1, Docs: n}
	var batch []*couchdoc.Doc
	flush := func() {
		if _, err := db.BulkDocs(ctx, batch, false); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for i := range ds.Count() {
		g := ds.Doc(i)
		for _, l := range g.Leaves {
			batch = append(batch, &couchdoc.Doc{ID: g.ID, Rev: l.Rev(), Deleted: l.Deleted, Body: l.Body,
				Revisions: &couchdoc.Revisions{Start: l.Start, IDs: l.IDs}})
		}
		if len(batch) >= 1000 {
			flush()
		}
	}
	flush()
	for _, ix := range findIndexes {
		if _, err := query.CreateIndex(ctx, db, []byte(ix)); err != nil {
			b.Fatal(err)
		}
	}
	return db
}
