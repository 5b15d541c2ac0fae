package localdb_test

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// BenchmarkEncryption does the same work on a plain and on an encrypted
// store (Options.Key), one after the other, for each kind of work:
// writing replicated documents as a pull does, reading the changes feed
// with the documents as a push does, Get, an indexed Find, and Open.
// With -count N the runs alternate plain, encrypted, plain, ...; compare
// each pair's docs/s or ns/op (the target: encrypted at most
// 1.2x plain).
func BenchmarkEncryption(b *testing.B) {
	key := sha256.Sum256([]byte("bench"))
	for _, w := range []struct {
		name string
		fn   func(b *testing.B, key []byte)
	}{{"pull", benchCryptPull}, {"push", benchCryptPush}, {"get", benchCryptGet}, {"find", benchCryptFind}, {"open", benchCryptOpen}} {
		b.Run(w.name, func(b *testing.B) {
			b.Run("plain", func(b *testing.B) { w.fn(b, nil) })
			b.Run("encrypted", func(b *testing.B) { w.fn(b, key[:]) })
		})
	}
}

// cryptStore opens a new store (encrypted when key is set) holding n
// replicated 1-KB documents.
func cryptStore(b *testing.B, key []byte, n int) (*localdb.DB, string) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for i := 0; i < n; i += 1000 {
		if _, err := db.BulkDocs(bg, replBatch(i, 1000), false); err != nil {
			b.Fatal(err)
		}
	}
	return db, path
}

func benchCryptPull(b *testing.B, key []byte) {
	db, _ := cryptStore(b, key, 0)
	batches := make([][]*couchdoc.Doc, b.N)
	for i := range batches {
		batches[i] = replBatch(i*1000, 1000)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.BulkDocs(bg, batches[i], false); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "docs/s")
}

func benchCryptPush(b *testing.B, key []byte) {
	const n = 20000
	db, _ := cryptStore(b, key, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := 0
		if _, err := db.Changes(bg, localdb.ChangesOptions{IncludeDocs: true}, func(c *localdb.Change) error {
			got++
			return nil
		}); err != nil || got != n {
			b.Fatalf("%d changes, %v", got, err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
}

func benchCryptGet(b *testing.B, key []byte) {
	const n = 20000
	db, _ := cryptStore(b, key, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.Get(bg, fmt.Sprintf("doc-%08d", (i*7919)%n), localdb.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCryptFind(b *testing.B, key []byte) {
	const n = 20000
	db, _ := cryptStore(b, key, n)
	if _, err := query.CreateIndex(bg, db, []byte(`{"index":{"fields":["n"]}}`)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lo := (i * 7919) % (n - 20)
		res, err := query.Find(bg, db, []byte(fmt.Sprintf(`{"selector":{"n":{"$gte":%d}},"limit":20}`, lo)))
		if err != nil || len(res.Docs) != 20 {
			b.Fatalf("find: %v", err)
		}
	}
}

func benchCryptOpen(b *testing.B, key []byte) {
	db, path := cryptStore(b, key, 20000)
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		db, err := localdb.Open(path, &localdb.Options{Key: key})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
