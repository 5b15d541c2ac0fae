package localdb_test

import (
	"testing"

	"github.com/settee/settee/localdb/localdbtest"
)

// TestReadPoolsMapping: Mango queries read through a mapping of the file;
// every other read (replication, feeds) does not, so walking the whole
// file does not leave it counted in the process's RSS.
func TestReadPoolsMapping(t *testing.T) {
	db := localdbtest.Open(t)
	reads, queries, err := db.MmapSizes(bg)
	if err != nil {
		t.Fatal(err)
	}
	if reads != 0 || queries != 256<<20 && queries != 0x7fff0000 {
		t.Fatalf("mmap_size: reads %d, queries %d; want 0 and 2 GiB - 64 KiB (256 MiB on 32-bit)", reads, queries)
	}
}
