package viewstore

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestReductionsForgotten: a chunk's cached reduction is dropped when a
// batch of this File changes the chunk, kept when it changes another,
// and every one is dropped when the file's sequence moves without this
// File seeing the batch (another process), or when the query read an
// older sequence.
func TestReductionsForgotten(t *testing.T) {
	defer SetChunkRows(4)()
	path := filepath.Join(t.TempDir(), "sig.view")
	f, err := Open(bg, path, "sig", "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	other, err := Open(bg, path, "sig", "")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	write := func(f *File, seq int64, k byte, id string) {
		t.Helper()
		b, err := f.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Add(0, key(k), id, 0, []byte(`"k"`), []byte(`1`)); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(seq, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 16 {
		write(f, int64(i+1), byte(10*i), string(rune('a'+i)))
	}
	var sums []*Summary
	err = f.ScanParts(bg, Range{View: 0}, func(*Summary) bool { return true },
		func(*Row) (bool, error) { return true, nil },
		func(s *Summary) (bool, error) { sums = append(sums, s); return true, nil })
	if err != nil || len(sums) < 3 {
		t.Fatalf("%d whole chunks, %v", len(sums), err)
	}
	for i, s := range sums {
		f.KeepReduction(s, 16, json.RawMessage(`[`+string(rune('0'+i))+`]`))
	}
	has := func(s *Summary, seq int64) bool { _, ok := f.Reduction(s, seq); return ok }
	if !has(sums[0], 16) || !has(sums[2], 16) {
		t.Fatal("kept reductions not found")
	}
	// A row in the last chunk's key range: the others stay.
	write(f, 17, 255, "z")
	if !has(sums[0], 17) || has(sums[len(sums)-1], 17) {
		t.Fatalf("after a write to the last chunk: first kept %v, last dropped %v", has(sums[0], 17), !has(sums[len(sums)-1], 17))
	}
	// Another File's batch: everything goes.
	write(other, 18, 254, "y")
	if has(sums[0], 18) {
		t.Fatal("a reduction survived another File's batch")
	}
	f.KeepReduction(sums[0], 18, json.RawMessage(`1`))
	if has(sums[0], 17) {
		t.Fatal("a query at an older sequence was given a newer reduction")
	}
}
