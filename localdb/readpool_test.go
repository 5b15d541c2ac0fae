package localdb_test

import (
	"testing"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

// TestReadPoolsMapping: Mango queries read through a mapping of the file;
// every other read (replication, feeds) does not, so walking the whole
// file does not leave it counted in the process's RSS.
func TestReadPoolsMapping(t *testing.T) {
	if localdbtest.Encrypted() {
		t.Skip("an encrypted store is never mapped: every read is decrypted (cryptvfs's methods have no xFetch)")
	}
	db := localdbtest.Open(t)
	reads, queries, err := db.MmapSizes(bg)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 0 || queries != 256<<20 && queries != 0x7fff0000 {
		t.Fatalf("mmap_size: reads %d, queries %d; want 0 and 2 GiB - 64 KiB (256 MiB on 32-bit)", reads, queries)
	}
}

// TestNewStorePages: a new store has 8-KiB pages, and its writer a
// 1,000-KiB cache (see pageSize in db.go); reopened, it keeps both.
func TestNewStorePages(t *testing.T) {
	path := t.TempDir() + "/pages.db"
	for range 2 {
		db, err := localdb.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		size, cache, err := db.PageSettings(bg)
		db.Close()
		if err != nil || size != 8192 || cache != -1000 {
			t.Fatalf("page_size %d, cache_size %d, %v; want 8192 and -1000", size, cache, err)
		}
	}
}
