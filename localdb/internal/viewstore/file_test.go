package viewstore

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

var bg = context.Background()

func key(b byte) []byte { return []byte{b} }

func TestFileRangesCountsAndSeqs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v", "sig.view")
	f, err := Open(bg, path, "sig", "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := f.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	// View 0: keys 1, 2 (two ids), 3; view 1: one row.
	for _, r := range []struct {
		view int
		k    byte
		id   string
	}{{0, 1, "a"}, {0, 2, "b"}, {0, 2, "c"}, {0, 3, "d"}, {1, 9, "a"}} {
		if err := b.Add(r.view, key(r.k), r.id, 0, []byte(`"k"`), []byte(`null`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(7, map[int]int64{0: 7}); err != nil {
		t.Fatal(err)
	}
	ids := func(r Range) []string {
		var out []string
		if err := f.Scan(bg, r, 0, func(row *Row) (bool, error) { out = append(out, row.ID); return true, nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	two := &Bound{Key: key(2)}
	for _, c := range []struct {
		r    Range
		want []string
	}{
		{Range{View: 0}, []string{"a", "b", "c", "d"}},
		{Range{View: 0, Start: two, End: two, InclusiveEnd: true}, []string{"b", "c"}},
		{Range{View: 0, End: two}, []string{"a"}},
		{Range{View: 0, Start: &Bound{Key: key(2), ID: "c", HasID: true}, InclusiveEnd: true}, []string{"c", "d"}},
		{Range{View: 0, Descending: true, Start: two, InclusiveEnd: true}, []string{"c", "b", "a"}},
		{Range{View: 0, Descending: true, End: two}, []string{"d"}},
	} {
		if got := ids(c.r); !slices.Equal(got, c.want) {
			t.Errorf("%+v: %v, want %v", c.r, got, c.want)
		}
	}
	if n, err := f.Before(bg, 0, two, false); err != nil || n != 1 {
		t.Errorf("before 2: %d %v", n, err)
	}
	if n, err := f.Before(bg, 0, two, true); err != nil || n != 1 {
		t.Errorf("before 2 descending: %d %v", n, err)
	}
	// Removing a document's rows moves the counts and its views' seqs.
	b, err = f.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	var touched []int
	if err := b.RemoveDoc("a", func(v int) { touched = append(touched, v) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(touched)
	if !slices.Equal(touched, []int{0, 1}) {
		t.Errorf("touched %v", touched)
	}
	if err := b.Commit(9, map[int]int64{1: 9}); err != nil {
		t.Fatal(err)
	}
	for v, want := range []int64{3, 0} {
		if n, err := f.Rows(bg, v); err != nil || n != want {
			t.Errorf("view %d rows %d %v, want %d", v, n, err, want)
		}
	}
	if s, _ := f.Seq(bg); s != 9 {
		t.Errorf("seq %d", s)
	}
	if s, _ := f.ViewSeq(bg, 0); s != 7 {
		t.Errorf("view 0 seq %d", s)
	}
	if s, _ := f.ViewSeq(bg, 1); s != 9 {
		t.Errorf("view 1 seq %d", s)
	}
	if _, err := Open(bg, path, "other", ""); !errors.Is(err, ErrOtherSignature) {
		t.Errorf("other signature: %v", err)
	}
}
