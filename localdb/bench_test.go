package localdb_test

import (
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// body1K is a ~1 KB JSON body.
func body1K(i int) []byte {
	return []byte(fmt.Sprintf(`{"n":%d,"name":"document %d","text":"%s"}`, i, i, strings.Repeat("x", 960)))
}

func replBatch(start, n int) []*couchdoc.Doc {
	docs := make([]*couchdoc.Doc, n)
	for i := range docs {
		k := start + i
		h := md5.Sum([]byte(fmt.Sprint(k)))
		hash := hex.EncodeToString(h[:])
		docs[i] = &couchdoc.Doc{ID: fmt.Sprintf("doc-%08d", k), Rev: "1-" + hash, Body: body1K(k),
			Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{hash}}}
	}
	return docs
}

func benchDB(b *testing.B) *localdb.DB {
	db, err := localdb.Open(filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func BenchmarkPut(b *testing.B) {
	db := benchDB(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.Put(bg, &couchdoc.Doc{ID: fmt.Sprintf("d%d", i), Body: body1K(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkBulkDocsReplicated writes batches of 1,000 new 1-KB documents
// with new_edits=false, as a pull replication does.
func BenchmarkBulkDocsReplicated(b *testing.B) {
	batches := make([][]*couchdoc.Doc, b.N)
	for i := range batches {
		batches[i] = replBatch(i*1000, 1000)
	}
	writeBatches(b, batches)
}

// writeBatches times writing batches of 1,000 replicated documents into
// a new store.
func writeBatches(b *testing.B, batches [][]*couchdoc.Doc) {
	db := benchDB(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := db.BulkDocs(bg, batches[i], false)
		if err != nil || !res[999].OK {
			b.Fatal(err, res[999])
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkBaselinePlainInsert inserts the same JSON bodies into a plain
// one-table SQLite schema, one transaction per 1,000, with the store's
// pragmas: the yardstick for BenchmarkBulkDocsReplicated.
func BenchmarkBaselinePlainInsert(b *testing.B) {
	path := filepath.Join(b.TempDir(), "plain.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE docs (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body BLOB NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	batches := make([][]*couchdoc.Doc, b.N)
	for i := range batches {
		batches[i] = replBatch(i*1000, 1000)
	}
	stmt, err := db.Prepare("INSERT INTO docs (id, rev, body) VALUES (?, ?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		s := tx.Stmt(stmt)
		for _, d := range batches[i] {
			if _, err := s.Exec(d.ID, d.Rev, []byte(d.Body)); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "docs/s")
}

func BenchmarkChangesScan(b *testing.B) {
	const n = 10000
	benchChanges(b, n, localdb.ChangesOptions{AllDocs: true}, n, "docs/s")
}

// benchChanges reads the feed of a store of n documents with opts b.N
// times, each read giving want rows, and reports the rows a second as
// unit.
func benchChanges(b *testing.B, n int, opts localdb.ChangesOptions, want int, unit string) {
	db := benchDBWith(b, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows := 0
		if _, err := db.Changes(bg, opts, func(*localdb.Change) error { rows++; return nil }); err != nil || rows != want {
			b.Fatal(err, rows)
		}
	}
	b.ReportMetric(float64(b.N*want)/b.Elapsed().Seconds(), unit)
}

func BenchmarkRevsDiff(b *testing.B) {
	db := benchDB(b)
	docs := replBatch(0, 1000)
	if _, err := db.BulkDocs(bg, docs, false); err != nil {
		b.Fatal(err)
	}
	req := make(map[string][]string, 1000)
	for i, d := range docs {
		req[d.ID] = []string{d.Rev, fmt.Sprintf("2-%032x", i)}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := db.RevsDiff(bg, req)
		if err != nil || len(res) != 1000 {
			b.Fatal(err, len(res))
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkBulkDocsVsBaseline interleaves the two writes above, batch for
// batch, so a busy machine slows both alike, and reports the store's speed
// as a fraction of the plain insert's ("ratio"; the target is >= 0.40).
func BenchmarkBulkDocsVsBaseline(b *testing.B) {
	db := benchDB(b)
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "plain.db")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1)
	if _, err := raw.Exec("CREATE TABLE docs (id TEXT PRIMARY KEY, rev TEXT NOT NULL, body BLOB NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	stmt, err := raw.Prepare("INSERT INTO docs (id, rev, body) VALUES (?, ?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	var ours, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		batch := replBatch(i*1000, 1000)
		b.StartTimer()
		t0 := time.Now()
		tx, err := raw.Begin()
		if err != nil {
			b.Fatal(err)
		}
		s := tx.Stmt(stmt)
		for _, d := range batch {
			if _, err := s.Exec(d.ID, d.Rev, []byte(d.Body)); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := db.BulkDocs(bg, batch, false); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(t1)
		base += t1.Sub(t0)
	}
	b.ReportMetric(float64(b.N*1000)/ours.Seconds(), "docs/s")
	b.ReportMetric(float64(b.N*1000)/base.Seconds(), "baseline-docs/s")
	b.ReportMetric(base.Seconds()/ours.Seconds(), "ratio")
}

func BenchmarkGet(b *testing.B) {
	db := benchDB(b)
	docs := replBatch(0, 1000)
	if _, err := db.BulkDocs(bg, docs, false); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.Get(bg, docs[i%1000].ID, localdb.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkOpenRevsBatch reads 250 documents (a replication's _bulk_get
// chunk) with OpenRevs one by one (a read transaction each) and with
// OpenRevsBatch, alternately, and reports both speeds and their ratio.
func BenchmarkOpenRevsBatch(b *testing.B) {
	db := benchDB(b)
	docs := replBatch(0, 1000)
	if _, err := db.BulkDocs(bg, docs, false); err != nil {
		b.Fatal(err)
	}
	const chunk = 250
	opts := localdb.GetOptions{Revs: true, Latest: true, Attachments: true}
	var single, batched time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		part := docs[(i%4)*chunk : (i%4+1)*chunk]
		t0 := time.Now()
		for _, d := range part {
			res, err := db.OpenRevs(bg, d.ID, []string{d.Rev}, opts)
			if err != nil || len(res) != 1 || res[0].Doc == nil {
				b.Fatal(err, res)
			}
		}
		t1 := time.Now()
		reqs := make([]localdb.RevsRequest, len(part))
		for k, d := range part {
			reqs[k] = localdb.RevsRequest{ID: d.ID, Revs: []string{d.Rev}}
		}
		n := 0
		err := db.OpenRevsBatch(bg, reqs, opts, func(id string, r localdb.OpenRev, err error) error {
			if err != nil || r.Doc == nil {
				b.Fatal(id, err)
			}
			n++
			return nil
		})
		if err != nil || n != chunk {
			b.Fatal(err, n)
		}
		single += t1.Sub(t0)
		batched += time.Since(t1)
	}
	b.ReportMetric(float64(b.N*chunk)/single.Seconds(), "single-docs/s")
	b.ReportMetric(float64(b.N*chunk)/batched.Seconds(), "docs/s")
	b.ReportMetric(single.Seconds()/batched.Seconds(), "speedup")
}

// BenchmarkBulkDocsReplicatedConflicts is BenchmarkBulkDocsReplicated with
// one document in 20 coming twice in its batch (a second, conflicting
// leaf), as a pull of conflicted documents gives.
func BenchmarkBulkDocsReplicatedConflicts(b *testing.B) {
	db := benchDB(b)
	batches := make([][]*couchdoc.Doc, b.N)
	for i := range batches {
		for k, d := range replBatch(i*1000, 1000) {
			batches[i] = append(batches[i], d)
			if k%20 == 0 {
				h := fmt.Sprintf("%032x", k+1)
				batches[i] = append(batches[i], &couchdoc.Doc{ID: d.ID, Rev: "1-" + h, Body: d.Body,
					Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{h}}})
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := db.BulkDocs(bg, batches[i], false)
		if err != nil || !res[len(res)-1].OK {
			b.Fatal(err, res[len(res)-1])
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "docs/s")
}

// BenchmarkChangesTail reads the last row of the feed, as a continuous feed
// does after every commit: the cost of a page, not of its rows.
func BenchmarkChangesTail(b *testing.B) {
	const n = 10000
	benchChanges(b, n, localdb.ChangesOptions{Since: n - 1}, 1, "pages/s")
}

// benchDBWith is a benchmark store holding n replicated documents.
func benchDBWith(b *testing.B, n int) *localdb.DB {
	db := benchDB(b)
	for i := 0; i < n; i += 1000 {
		if _, err := db.BulkDocs(bg, replBatch(i, 1000), false); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// BenchmarkBulkDocsRandomIDs is BenchmarkBulkDocsReplicated with ids in
// random order (as UUIDs give): each batch's rows land all over the id
// index, which the writer's page cache then holds or rereads.
func BenchmarkBulkDocsRandomIDs(b *testing.B) {
	batches := make([][]*couchdoc.Doc, b.N)
	for i := range batches {
		batches[i] = replBatch(i*1000, 1000)
		for _, d := range batches[i] {
			h := md5.Sum([]byte(d.ID))
			d.ID = hex.EncodeToString(h[:])
		}
	}
	writeBatches(b, batches)
}
