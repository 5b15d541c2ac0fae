package viewstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// checkChunks checks the chunk records of every view of f against its
// rows: the first chunk starts below every row, each record's count,
// first and last keys and statistics are those of the rows up to the next
// chunk, sizes stay within the split and merge bounds, and the counts add
// up to the view's row count.
func checkChunks(t *testing.T, f *File, views int) {
	t.Helper()
	target := chunkTarget.Load()
	for v := 0; v < views; v++ {
		list, err := loadChunks(bg, f.db, v)
		if err != nil {
			t.Fatal(err)
		}
		total, err := f.Rows(bg, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 0 {
			if total != 0 {
				t.Fatalf("view %d: %d rows, no chunks", v, total)
			}
			continue
		}
		if list[0].lo.cmp(lowest) != 0 {
			t.Fatalf("view %d: first chunk at %v", v, list[0].lo)
		}
		var sum int64
		for i, c := range list {
			var hi *pos
			if i+1 < len(list) {
				hi = &list[i+1].lo
			}
			want, err := recut(bg, f.db, v, &chunk{lo: c.lo, count: 1}, hi)
			if err != nil {
				t.Fatal(err)
			}
			w := want[0]
			if c.count != w.count || string(c.first) != string(w.first) || string(c.last) != string(w.last) || c.stats.Numeric != w.stats.Numeric {
				t.Fatalf("view %d chunk %d: count %d first %x last %x numeric %v; rows give %d %x %x %v",
					v, i, c.count, c.first, c.last, c.stats.Numeric, w.count, w.first, w.last, w.stats.Numeric)
			}
			if c.stats.Numeric && c.count > 0 && (!near(c.stats.Sum, w.stats.Sum) || c.stats.Min != w.stats.Min || c.stats.Max != w.stats.Max || !near(c.stats.Sumsq, w.stats.Sumsq)) {
				t.Fatalf("view %d chunk %d: stats %+v, rows give %+v", v, i, c.stats, w.stats)
			}
			if i > 0 && (c.count < max(target/4, 1) || c.count > 2*target+target/4) {
				t.Fatalf("view %d chunk %d: %d rows (target %d)", v, i, c.count, target)
			}
			sum += c.count
		}
		if sum != total {
			t.Fatalf("view %d: chunks count %d rows, the view has %d", v, sum, total)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// model is the rows a test file should hold: by document, its rows.
type model map[string][]modelRow

type modelRow struct {
	view  int
	key   []byte
	value string
}

func randRows(r *rand.Rand) []modelRow {
	var rows []modelRow
	for n := r.IntN(4); n > 0; n-- {
		key := []byte{byte(1 + r.IntN(12))}
		if r.IntN(2) == 0 {
			key = append(key, byte(r.IntN(5)))
		}
		value := strconv.Itoa(r.IntN(100) - 20)
		switch r.IntN(10) {
		case 0:
			value = `"text"`
		case 1:
			value = strconv.FormatFloat(r.Float64()*10, 'f', 3, 64)
		}
		rows = append(rows, modelRow{view: r.IntN(2), key: key, value: value})
	}
	return rows
}

// TestChunksRandom writes random batches (new documents, changed ones,
// removed ones) across small chunks and checks after each batch the
// records, offsets against counting rows, and ScanParts against Scan.
func TestChunksRandom(t *testing.T) {
	defer SetChunkRows(4)()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			f, err := Open(bg, filepath.Join(t.TempDir(), "v.view"), "sig", "")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m := model{}
			for batch := 0; batch < 30; batch++ {
				b, err := f.Begin(bg)
				if err != nil {
					t.Fatal(err)
				}
				for op := r.IntN(40); op > 0; op-- {
					id := fmt.Sprintf("d%03d", r.IntN(150))
					if err := b.RemoveDoc(id, func(int) {}); err != nil {
						t.Fatal(err)
					}
					delete(m, id)
					if r.IntN(4) == 0 {
						continue
					}
					rows := randRows(r)
					for n, row := range rows {
						if err := b.Add(row.view, row.key, id, n, []byte(`"k"`), []byte(row.value)); err != nil {
							t.Fatal(err)
						}
					}
					m[id] = rows
				}
				if err := b.Commit(int64(batch+1), nil); err != nil {
					t.Fatal(err)
				}
				checkChunks(t, f, 2)
				checkQueries(t, r, f)
			}
		})
	}
}

func randBound(r *rand.Rand) *Bound {
	if r.IntN(4) == 0 {
		return nil
	}
	b := &Bound{Key: []byte{byte(r.IntN(14))}}
	if r.IntN(2) == 0 {
		b.Key = append(b.Key, byte(r.IntN(5)))
	}
	if r.IntN(2) == 0 {
		b.ID, b.HasID = fmt.Sprintf("d%03d", r.IntN(150)), true
	}
	return b
}

// checkQueries compares Before with counting rows, and ScanParts (its
// summaries read back as rows) with Scan, over random ranges.
func checkQueries(t *testing.T, r *rand.Rand, f *File) {
	t.Helper()
	for q := 0; q < 20; q++ {
		view, b, desc := r.IntN(2), randBound(r), r.IntN(2) == 0
		got, err := f.Before(bg, view, b, desc)
		if err != nil {
			t.Fatal(err)
		}
		want, err := f.BeforeByCount(bg, view, b, desc)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("Before(%d, %+v, %v) = %d, counting gives %d", view, b, desc, got, want)
		}
		rg := Range{View: view, Start: randBound(r), End: randBound(r), InclusiveEnd: r.IntN(2) == 0, Descending: desc}
		var all []string
		if err := f.Scan(bg, rg, 0, func(row *Row) (bool, error) {
			all = append(all, row.ID+string(row.Key))
			return true, nil
		}); err != nil {
			t.Fatal(err)
		}
		var parts []string
		var sums []*Summary
		err = f.ScanParts(bg, rg, func(*Summary) bool { return r.IntN(3) > 0 }, func(row *Row) (bool, error) {
			parts = append(parts, row.ID+string(row.Key))
			return true, nil
		}, func(s *Summary) (bool, error) {
			first, err := f.FirstRow(bg, s, desc)
			if err != nil {
				return false, err
			}
			var rows []string
			var st Stats
			st.Numeric = true
			inner := Range{View: view, Descending: desc, from: s.lo, to: s.hi}
			if err := f.Scan(bg, inner, 0, func(row *Row) (bool, error) {
				if !rg.above(pos{key: row.Key, id: row.ID}) || !rg.below(pos{key: row.Key, id: row.ID}) {
					t.Fatalf("summary of %+v holds %x %s, outside", rg, row.Key, row.ID)
				}
				if v, ok := PlainNumber(row.Value); ok && st.Numeric {
					st.add(v, int64(len(rows)))
				} else {
					st.Numeric = false
				}
				rows = append(rows, row.ID+string(row.Key))
				return true, nil
			}); err != nil {
				return false, err
			}
			if int64(len(rows)) != s.Count || first.ID+string(first.Key) != rows[0] || st.Numeric != s.Stats.Numeric || (st.Numeric && !near(st.Sum, s.Stats.Sum)) {
				t.Fatalf("summary %+v: rows %v stats %+v", s, rows, st)
			}
			parts = append(parts, rows...)
			sums = append(sums, s)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(parts, all) {
			t.Fatalf("ScanParts %+v (%d summaries): %q, Scan %q", rg, len(sums), parts, all)
		}
		// Stopping: the first row or summary only.
		calls := 0
		stop := func() (bool, error) { calls++; return false, nil }
		if err := f.ScanParts(bg, rg, func(*Summary) bool { return true }, func(*Row) (bool, error) { return stop() },
			func(*Summary) (bool, error) { return stop() }); err != nil {
			t.Fatal(err)
		}
		if calls != min(len(all), 1) {
			t.Fatalf("stopped ScanParts called back %d times", calls)
		}
	}
}

// fill writes n documents of random rows to f in one committed batch.
func fill(t *testing.T, f *File, r *rand.Rand, n int, seq int64) {
	t.Helper()
	b, err := f.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("d%04d", i)
		if err := b.RemoveDoc(id, func(int) {}); err != nil {
			t.Fatal(err)
		}
		for k, row := range randRows(r) {
			if err := b.Add(row.view, row.key, id, k, []byte(`"k"`), []byte(row.value)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Commit(seq, nil); err != nil {
		t.Fatal(err)
	}
}

// TestChunksCrash: a batch that never commits (rolled back, or the
// process gone with its transaction open) leaves rows and chunks as the
// last commit left them.
func TestChunksCrash(t *testing.T) {
	defer SetChunkRows(4)()
	path := filepath.Join(t.TempDir(), "v.view")
	f, err := Open(bg, path, "sig", "")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	fill(t, f, r, 200, 1)
	before, err := f.Before(bg, 0, &Bound{Key: []byte{6}}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"rollback", "close"} {
		b, err := f.Begin(bg)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ {
			id := fmt.Sprintf("d%04d", i)
			if err := b.RemoveDoc(id, func(int) {}); err != nil {
				t.Fatal(err)
			}
			if err := b.Add(0, []byte{1}, id, 0, []byte(`"k"`), []byte(`1`)); err != nil {
				t.Fatal(err)
			}
		}
		if end == "rollback" {
			b.Rollback()
		} else {
			// A copy of the files taken with the transaction open is
			// what a crash leaves.
			crashed := filepath.Join(t.TempDir(), "v.view")
			for _, ext := range []string{"", "-wal"} {
				data, err := os.ReadFile(path + ext)
				if err == nil {
					err = os.WriteFile(crashed+ext, data, 0o644)
				}
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					t.Fatal(err)
				}
			}
			b.Rollback()
			f.Close()
			if f, err = Open(bg, crashed, "sig", ""); err != nil {
				t.Fatal(err)
			}
		}
		checkChunks(t, f, 2)
		if n, err := f.Before(bg, 0, &Bound{Key: []byte{6}}, false); err != nil || n != before {
			t.Fatalf("%s: before %d %v, want %d", end, n, err, before)
		}
	}
	f.Close()
}

// TestChunksRebuilt: a file without chunks (made before they existed) or
// whose rows moved on without them (an older Settee updated it) has them
// rebuilt when opened.
func TestChunksRebuilt(t *testing.T) {
	defer SetChunkRows(4)()
	path := filepath.Join(t.TempDir(), "v.view")
	for _, stale := range []string{
		"DROP TABLE chunks; DELETE FROM meta WHERE key = 'chunks_seq'",
		"DELETE FROM rows WHERE docid < 'd0050'; UPDATE meta SET value = value + 1 WHERE key = 'update_seq'",
	} {
		f, err := Open(bg, path, "sig", "")
		if err != nil {
			t.Fatal(err)
		}
		fill(t, f, rand.New(rand.NewPCG(4, 4)), 200, 1)
		if _, err := f.db.ExecContext(bg, stale); err != nil {
			t.Fatal(err)
		}
		// The row counts of meta follow the rows, as an older Settee keeps them.
		if _, err := f.db.ExecContext(bg, "UPDATE meta SET value = (SELECT count(*) FROM rows WHERE view = 0) WHERE key = 'view_rows:0'; UPDATE meta SET value = (SELECT count(*) FROM rows WHERE view = 1) WHERE key = 'view_rows:1'"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if f, err = Open(bg, path, "sig", ""); err != nil {
			t.Fatal(err)
		}
		checkChunks(t, f, 2)
		checkQueries(t, rand.New(rand.NewPCG(5, 5)), f)
		f.Close()
	}
}
