package sync_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// benchCloneFirstSync is the prebuilt-database figure: a remote
// holds n docs, a seed store pulls them all (the baseline), three clones
// are made from it, 100 docs change on the remote, and each clone syncs.
// It reports the seed's full pull and the clones' first syncs (seconds),
// the docs each clone fetched and revisions it checked, and the distinct
// replication ids. Run with -benchtime=1x.
func benchCloneFirstSync(b *testing.B, newDB newDBFunc, n int) {
	const edited = 100
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		origin := localdbtest.OpenNamed(b, "origin", nil)
		synctest.PutDocs(b, origin, "d", n)
		u := newDB(b, fmt.Sprintf("clone%d", i))
		if _, err := sync.Replicate(ctx, sync.Options{Source: synctest.Local(origin), Target: synctest.Remote(b, u, nil)}); err != nil {
			b.Fatal(err)
		}
		seed := localdbtest.OpenNamed(b, "seed", nil)
		start := time.Now()
		if _, err := sync.Sync(ctx, synctest.Local(seed), synctest.Remote(b, u, nil), sync.Options{}); err != nil {
			b.Fatal(err)
		}
		full := time.Since(start)
		if _, err := sync.Sync(ctx, synctest.Local(seed), synctest.Remote(b, u, nil), sync.Options{}); err != nil {
			b.Fatal(err)
		}
		// 100 edits reach the remote from the origin.
		var docs []*couchdoc.Doc
		for k := range edited {
			id := fmt.Sprintf("d%05d", k)
			d, err := origin.Get(ctx, id, localdb.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			docs = append(docs, &couchdoc.Doc{ID: id, Rev: d.Rev, Body: []byte(`{"edited":true}`)})
		}
		if _, err := origin.BulkDocs(ctx, docs, true); err != nil {
			b.Fatal(err)
		}
		if _, err := sync.Replicate(ctx, sync.Options{Source: synctest.Local(origin), Target: synctest.Remote(b, u, nil)}); err != nil {
			b.Fatal(err)
		}
		ids := map[string]bool{}
		var cloneTime time.Duration
		var fetched, checked int64
		for c := range 3 {
			path := filepath.Join(b.TempDir(), fmt.Sprintf("c%d.db", c))
			if err := localdb.Clone(ctx, seed.Path(), path); err != nil {
				b.Fatal(err)
			}
			db, err := localdb.Open(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			res, err := sync.Sync(ctx, synctest.Local(db), synctest.Remote(b, u, nil), sync.Options{})
			cloneTime += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			if info, _ := db.Info(ctx); info.DocCount != int64(n) {
				b.Fatalf("clone %d has %d docs", c, info.DocCount)
			}
			if err := db.CheckInvariants(ctx); err != nil {
				b.Fatal(err)
			}
			db.Close()
			fetched = max(fetched, res.Pull.Stats.DocsWritten)
			checked = max(checked, res.Pull.Stats.MissingChecked)
			ids[res.Pull.ReplicationID] = true
		}
		b.ReportMetric(full.Seconds(), "seed-full-pull-s")
		b.ReportMetric(cloneTime.Seconds()/3, "clone-first-sync-s")
		b.ReportMetric(float64(fetched), "clone-docs-fetched")
		b.ReportMetric(float64(checked), "clone-revs-checked")
		b.ReportMetric(float64(len(ids)), "distinct-pull-ids")
	}
}

func BenchmarkCloneFirstSync100kServer(b *testing.B)  { benchCloneFirstSync(b, serverDBs(b), 100_000) }
func BenchmarkCloneFirstSync100kPouchDB(b *testing.B) { benchCloneFirstSync(b, pouchDBs(b), 100_000) }
