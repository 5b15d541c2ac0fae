package query_test

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// viewKinds are the document types of the view benchmark (the bench
// harness's kinds: about 16,000 documents each of 100,000).
var viewKinds = []string{"contact", "note", "task", "invoice", "photo", "event"}

// viewBenchStore is a store of benchDocs documents with a type, an age
// and a score (the fields the bench harness's documents have), and a
// design document v with emit([doc.type, doc.age], doc.score) and _stats,
// the view built.
func viewBenchStore(b *testing.B, reduce string) *localdb.DB {
	db, err := localdb.Open(filepath.Join(b.TempDir(), "people.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	for start := 0; start < benchDocs; start += 1000 {
		docs := make([]*couchdoc.Doc, 0, 1000)
		for i := start; i < start+1000; i++ {
			body := fmt.Sprintf(`{"type":%q,"age":%d,"score":%s}`, viewKinds[r.IntN(len(viewKinds))],
				18+r.IntN(80), strconv.FormatFloat(r.Float64()*1000, 'f', 3, 64))
			rev := fmt.Sprintf("%032x", i)
			docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("p%08d", i), Rev: "1-" + rev, Body: []byte(body),
				Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{rev}}})
		}
		if _, err := db.BulkDocs(bg, docs, false); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "_design/v", Body: []byte(`{"views":{"by_type_age":{"map":"function (doc) { emit([doc.type, doc.age], doc.score); }","reduce":` + strconv.Quote(reduce) + `}}}`)}); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if _, err := viewQuery(db, "limit=0"); err != nil {
		b.Fatal(err)
	}
	b.Logf("view built in %v", time.Since(t0))
	return db
}

func viewQuery(db *localdb.DB, q string) (*query.ViewResult, error) {
	v, err := url.ParseQuery(q)
	if err != nil {
		return nil, err
	}
	o, err := query.ViewOptionsFromURL(v)
	if err != nil {
		return nil, err
	}
	return query.View(bg, db, "v", "by_type_age", o)
}

// BenchmarkViewQueries measures the query shapes of bench/RESULTS.md's
// comparison with CouchDB 3.5.0 (a key, a range with a limit, one type's
// group at group_level=1), each query's median latency reported as p50-ms
// (and p99-ms).
func BenchmarkViewQueries(b *testing.B) { benchViewQueries(b, "_stats") }

// BenchmarkViewQueriesJS is BenchmarkViewQueries with a JavaScript reduce
// (sum of the values): the chunk records hold its reductions once a query
// computed them.
func BenchmarkViewQueriesJS(b *testing.B) {
	benchViewQueries(b, "function (keys, values, rereduce) { return sum(values); }")
}

// BenchmarkViewQueriesDistinct is BenchmarkViewQueries with
// _approx_count_distinct: each chunk's count of distinct keys is kept once
// a query computed it.
func BenchmarkViewQueriesDistinct(b *testing.B) { benchViewQueries(b, "_approx_count_distinct") }

func benchViewQueries(b *testing.B, reduce string) {
	db := viewBenchStore(b, reduce)
	shapes := []struct {
		name string
		q    func(i int) string
		rows int // -1: any
	}{
		{"key", func(i int) string {
			return fmt.Sprintf(`reduce=false&key=["%s",%d]`, viewKinds[i%6], 18+i%80)
		}, -1},
		{"range5-limit20", func(i int) string {
			a := 18 + i%75
			return fmt.Sprintf(`reduce=false&limit=20&startkey=["%s",%d]&endkey=["%s",%d]`, viewKinds[i%6], a, viewKinds[i%6], a+4)
		}, 20},
		{"group_level1-one-type", func(i int) string {
			return fmt.Sprintf(`group_level=1&startkey=["%s"]&endkey=["%s",{}]`, viewKinds[i%6], viewKinds[i%6])
		}, 1},
		{"reduce-all", func(i int) string { return "" }, 1},
	}
	for _, s := range shapes {
		b.Run(s.name, func(b *testing.B) {
			// Queries alternate between reading the chunk records and
			// reading rows only, so both see the same machine load.
			var lat [2][]time.Duration
			for i := 0; i < b.N; i++ {
				restore := query.SetViewChunks(i%2 == 0)
				t0 := time.Now()
				res, err := viewQuery(db, s.q(i/2))
				lat[i%2] = append(lat[i%2], time.Since(t0))
				restore()
				if err != nil {
					b.Fatal(err)
				}
				if s.rows >= 0 && len(res.Rows) != s.rows {
					b.Fatalf("%s: %d rows, want %d", s.q(i/2), len(res.Rows), s.rows)
				}
			}
			pct := func(l []time.Duration, p int) float64 {
				if len(l) == 0 {
					return 0
				}
				slices.Sort(l)
				return float64(l[len(l)*p/100].Microseconds()) / 1000
			}
			chunked, rows := pct(lat[0], 50), pct(lat[1], 50)
			b.ReportMetric(chunked, "p50-ms")
			b.ReportMetric(pct(lat[0], 99), "p99-ms")
			b.ReportMetric(rows, "rows-only-p50-ms")
			if chunked > 0 {
				b.ReportMetric(rows/chunked, "speedup")
			}
		})
	}
}

// BenchmarkViewUpdate measures bringing the view up to date after 1,000
// changed documents (the bench harness's incremental phase), reported as
// update-ms; the first build's time is logged.
func BenchmarkViewUpdate(b *testing.B) {
	db := viewBenchStore(b, "_stats")
	r := rand.New(rand.NewPCG(3, 4))
	var total time.Duration
	for i := 0; i < b.N; i++ {
		docs := make([]*couchdoc.Doc, 0, 1000)
		for k := 0; k < 1000; k++ {
			id := fmt.Sprintf("p%08d", r.IntN(benchDocs))
			d, err := db.Get(bg, id, localdb.GetOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if slices.ContainsFunc(docs, func(x *couchdoc.Doc) bool { return x.ID == id }) {
				continue
			}
			d.Body = []byte(fmt.Sprintf(`{"type":%q,"age":%d,"score":%d}`, viewKinds[r.IntN(len(viewKinds))], 18+r.IntN(80), r.IntN(1000)))
			docs = append(docs, d)
		}
		if _, err := db.BulkDocs(bg, docs, true); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := viewQuery(db, "limit=0"); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "update-ms")
}
