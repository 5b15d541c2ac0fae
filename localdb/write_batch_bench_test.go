package localdb_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// BenchmarkSave1000 saves 1,000 small new documents one Put at a time (a
// transaction each), in one Batch, and in one BulkDocs: what an app's
// "save these" costs with and without batching.
func BenchmarkSave1000(b *testing.B) {
	const n = 1000
	docs := func(round int) []*couchdoc.Doc {
		ds := make([]*couchdoc.Doc, n)
		for i := range ds {
			ds[i] = &couchdoc.Doc{ID: fmt.Sprintf("r%d-d%04d", round, i), Body: json.RawMessage(fmt.Sprintf(`{"n":%d,"title":"item %d","done":false}`, i, i))}
		}
		return ds
	}
	run := func(b *testing.B, save func(db *localdb.DB, ds []*couchdoc.Doc) error) {
		db := benchDB(b)
		rounds := make([][]*couchdoc.Doc, b.N)
		for i := range rounds {
			rounds[i] = docs(i)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := save(db, rounds[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	}
	b.Run("one-by-one", func(b *testing.B) {
		run(b, func(db *localdb.DB, ds []*couchdoc.Doc) error {
			for _, d := range ds {
				if _, err := db.Put(bg, d); err != nil {
					return err
				}
			}
			return nil
		})
	})
	b.Run("batch", func(b *testing.B) {
		run(b, func(db *localdb.DB, ds []*couchdoc.Doc) error {
			return db.Batch(bg, func(bt *localdb.Batch) error {
				for _, d := range ds {
					if _, err := bt.Put(d); err != nil {
						return err
					}
				}
				return nil
			})
		})
	})
	b.Run("bulk", func(b *testing.B) {
		run(b, func(db *localdb.DB, ds []*couchdoc.Doc) error {
			res, err := db.BulkDocs(bg, ds, true)
			if err != nil {
				return err
			}
			for _, r := range res {
				if err := r.Err(); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
