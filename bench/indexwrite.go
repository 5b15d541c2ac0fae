package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"text/tabwriter"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/procstat"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// Phase index-write: what keeping three Mango indexes costs a
// store's writes. The dataset's documents (bodies and revision trees; the
// attachments are left out, they would only dilute the indexes' share) go
// through localdb's BulkDocs, indexWriteBatch revisions per call, into a
// store without indexes and one with three json indexes, batch by batch in
// turn (which store goes first alternates too), so that both see the same
// machine load; the indexed store's docs/s over the plain one's is the
// figure.

// IndexWriteRun is one mode of phase index-write.
type IndexWriteRun struct {
	// Mode is "replicated" (new_edits=false with the dataset's revision
	// trees, conflicts and deletions: what a pull into an indexed store
	// does) or "app" (new_edits=true: each document's winning body saved
	// as a new document, as an app's bulk save does).
	Mode string `json:"mode"`
	// Docs is the number of revisions written to each store.
	Docs int `json:"docs"`
	// Seconds and CPU seconds spent in each store's BulkDocs calls (CPU:
	// the whole process's, background checkpoints included).
	PlainSeconds      float64 `json:"plain_seconds"`
	IndexedSeconds    float64 `json:"indexed_seconds"`
	PlainCPUSeconds   float64 `json:"plain_cpu_seconds"`
	IndexedCPUSeconds float64 `json:"indexed_cpu_seconds"`
	// Ratio is the indexed store's docs/s over the plain store's (the
	// target: >= 0.70); CPURatio the same by CPU seconds.
	Ratio    float64 `json:"ratio"`
	CPURatio float64 `json:"cpu_ratio"`
	// Bytes passed to write calls per document (/proc/self/io wchar).
	PlainWcharPerDoc   float64 `json:"plain_wchar_per_doc"`
	IndexedWcharPerDoc float64 `json:"indexed_wchar_per_doc"`
	// FloorSeconds and FloorCPUSeconds are the floor's (indexfloor.go):
	// the indexed store's entries inserted into a bare table, batch by
	// batch, in one transaction. BestRatio is PlainSeconds over
	// PlainSeconds + FloorSeconds: the most any design keeping the
	// entries in SQLite B-trees could reach; BestCPURatio the same by CPU.
	FloorSeconds    float64 `json:"floor_seconds"`
	FloorCPUSeconds float64 `json:"floor_cpu_seconds"`
	BestRatio       float64 `json:"best_ratio"`
	BestCPURatio    float64 `json:"best_cpu_ratio"`
}

// indexWriteIndexes are the find phase's two indexes and one on a
// high-cardinality string, whose keys land all over its B-tree.
var indexWriteIndexes = append(append([]string(nil), findIndexes...),
	`{"index": {"fields": ["email"]}, "ddoc": "bench-email", "name": "email", "type": "json"}`)

// indexWriteBatch is the revisions per BulkDocs call.
const indexWriteBatch = 1000

// indexWritePhase runs both modes.
func (b *bench) indexWritePhase(ctx context.Context) {
	for _, mode := range []string{"replicated", "app"} {
		b.logf("index-write: %s, %d docs, without and with 3 indexes", mode, b.ds.Count())
		r, err := indexWrite(ctx, filepath.Join(b.dir, "index-write-"+mode), b.ds, mode)
		if err != nil {
			b.fail("index-write "+mode, err)
			continue
		}
		b.logf("index-write %s: %.2f of the plain store's docs/s (CPU %.2f); SQLite's floor for the entries allows %.2f (CPU %.2f)", mode, r.Ratio, r.CPURatio, r.BestRatio, r.BestCPURatio)
		b.res.IndexWrite = append(b.res.IndexWrite, r)
	}
}

// indexWrite writes the dataset into a plain and an indexed store in dir.
func indexWrite(ctx context.Context, dir string, ds *Dataset, mode string) (*IndexWriteRun, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var stores [2]*localdb.DB
	for k, name := range []string{"plain.db", "indexed.db"} {
		db, err := localdb.Open(filepath.Join(dir, name), nil)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		stores[k] = db
	}
	for _, ix := range indexWriteIndexes {
		if _, err := query.CreateIndex(ctx, stores[1], []byte(ix)); err != nil {
			return nil, fmt.Errorf("create index: %w", err)
		}
	}
	var wall, cpu [2]time.Duration
	var wchar [2]int64
	r := &IndexWriteRun{Mode: mode}
	batch := make([]*couchdoc.Doc, 0, indexWriteBatch)
	flush := func(turn int) error {
		for j := range 2 {
			k := (turn + j) % 2
			// BulkDocs may keep the documents it is given: each store gets
			// its own copies.
			docs := make([]*couchdoc.Doc, len(batch))
			for i, d := range batch {
				c := *d
				docs[i] = &c
			}
			w0, t0, c0 := bytesWritten(), time.Now(), procstat.CPU()
			var res []couchdoc.DocResult
			var err error
			// Labelled for profiles (BenchmarkIndexWrite -cpuprofile).
			pprof.Do(ctx, pprof.Labels("store", []string{"plain", "indexed"}[k]), func(ctx context.Context) {
				res, err = stores[k].BulkDocs(ctx, docs, mode == "app")
			})
			if err != nil {
				return err
			}
			wall[k] += time.Since(t0)
			cpu[k] += procstat.CPU() - c0
			wchar[k] += bytesWritten() - w0
			for _, x := range res {
				if x.Error != "" {
					return fmt.Errorf("doc %q: %s: %s", x.ID, x.Error, x.Reason)
				}
			}
		}
		r.Docs += len(batch)
		batch = batch[:0]
		return nil
	}
	turn := 0
	docBatch := make(map[string]int, ds.Count())
	for i := range ds.Count() {
		g := ds.Doc(i)
		docBatch[g.ID] = turn
		if mode == "replicated" {
			for _, l := range g.Leaves {
				batch = append(batch, &couchdoc.Doc{ID: g.ID, Rev: l.Rev(), Deleted: l.Deleted, Body: l.Body,
					Revisions: &couchdoc.Revisions{Start: l.Start, IDs: l.IDs}})
			}
		} else if l := g.Leaves[0]; !l.Deleted {
			batch = append(batch, &couchdoc.Doc{ID: g.ID, Body: l.Body})
		}
		if len(batch) >= indexWriteBatch {
			if err := flush(turn); err != nil {
				return nil, err
			}
			turn++
		}
	}
	if len(batch) > 0 {
		if err := flush(turn); err != nil {
			return nil, err
		}
	}
	// Untimed: both stores hold the same documents, and the indexes
	// exactly what their definitions give.
	var infos [2]*localdb.Info
	for k, db := range stores {
		if err := db.CheckInvariants(ctx); err != nil {
			return nil, fmt.Errorf("%s store: %w", []string{"plain", "indexed"}[k], err)
		}
		info, err := db.Info(ctx)
		if err != nil {
			return nil, err
		}
		infos[k] = info
	}
	// The indexed store also holds the indexes' design documents.
	ddocs := int64(len(indexWriteIndexes))
	if a, b := infos[0], infos[1]; a.DocCount+ddocs != b.DocCount || a.DocDelCount != b.DocDelCount || a.UpdateSeq+ddocs != b.UpdateSeq {
		return nil, fmt.Errorf("the stores differ: plain %+v, indexed %+v", *infos[0], *infos[1])
	}
	// Closed first, so that no checkpoint of theirs runs during the
	// floor's timing (its CPU is the process's).
	for _, db := range stores {
		if err := db.Close(); err != nil {
			return nil, err
		}
	}
	var err error
	if r.FloorSeconds, r.FloorCPUSeconds, err = indexFloor(ctx, filepath.Join(dir, "indexed.db"), dir, docBatch); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	r.PlainSeconds, r.IndexedSeconds = wall[0].Seconds(), wall[1].Seconds()
	r.PlainCPUSeconds, r.IndexedCPUSeconds = cpu[0].Seconds(), cpu[1].Seconds()
	r.Ratio = ratio(r.PlainSeconds, r.IndexedSeconds)
	r.CPURatio = ratio(r.PlainCPUSeconds, r.IndexedCPUSeconds)
	r.BestRatio = ratio(r.PlainSeconds, r.PlainSeconds+r.FloorSeconds)
	r.BestCPURatio = ratio(r.PlainCPUSeconds, r.PlainCPUSeconds+r.FloorCPUSeconds)
	if r.Docs > 0 {
		r.PlainWcharPerDoc = float64(wchar[0]) / float64(r.Docs)
		r.IndexedWcharPerDoc = float64(wchar[1]) / float64(r.Docs)
	}
	return r, nil
}

// bytesWritten is the bytes this process has passed to write calls, 0 where
// Linux does not tell.
func bytesWritten() int64 {
	n, _ := procstat.IO("wchar")
	return n
}

// indexWriteTargets adds the index write target: the lower of both modes.
func (r *Results) indexWriteTargets() {
	if len(r.IndexWrite) == 0 {
		return
	}
	low := r.IndexWrite[0].Ratio
	for _, w := range r.IndexWrite[1:] {
		low = min(low, w.Ratio)
	}
	r.addTarget("BulkDocs with 3 indexes vs none, docs/s (the lower mode)", ">= 0.70", low, "x", low >= 0.70)
}

// writeIndexWriteTable prints phase index-write, if it ran.
func writeIndexWriteTable(w io.Writer, r *Results) {
	if len(r.IndexWrite) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| index-write\t docs\t plain docs/s\t 3 indexes docs/s\t ratio\t CPU s plain / indexed\t CPU ratio\t wchar/doc plain / indexed\t floor s (CPU s)\t best ratio (CPU)\t")
	fmt.Fprintln(tw, "|---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t")
	for _, x := range r.IndexWrite {
		fmt.Fprintf(tw, "| %s\t %d\t %.0f\t %.0f\t %.2f\t %.2f / %.2f\t %.2f\t %.0f / %.0f\t %.2f (%.2f)\t %.2f (%.2f)\t\n", x.Mode, x.Docs,
			float64(x.Docs)/x.PlainSeconds, float64(x.Docs)/x.IndexedSeconds, x.Ratio,
			x.PlainCPUSeconds, x.IndexedCPUSeconds, x.CPURatio, x.PlainWcharPerDoc, x.IndexedWcharPerDoc,
			x.FloorSeconds, x.FloorCPUSeconds, x.BestRatio, x.BestCPURatio)
	}
	tw.Flush()
	fmt.Fprintln(w)
}
