package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// FindRun is one contender's Mango figures on the pulled dataset: the two
// indexes built, then the same queries timed one by one.
type FindRun struct {
	// Contender is "settee" (localdb/query on the pulled store),
	// "pouchdb" (pouchdb-find on the pulled leveldb store) or the server
	// answering POST /{db}/_find over HTTP.
	Contender string `json:"contender"`
	// IndexBuildSeconds covers creating both indexes and, where a server
	// builds them lazily (CouchDB, pouchdb-find), the first query of each.
	IndexBuildSeconds float64 `json:"index_build_seconds"`
	// Queries is how many queries of each shape were timed.
	Queries    int     `json:"queries"`
	EqP50Ms    float64 `json:"eq_p50_ms"`
	EqP99Ms    float64 `json:"eq_p99_ms"`
	RangeP50Ms float64 `json:"range_p50_ms"`
	RangeP99Ms float64 `json:"range_p99_ms"`
	// ids are the first answers' document ids, to check the contenders
	// agree.
	ids [][]string
}

// findIndexes are the two json indexes the queries use.
var findIndexes = []string{
	`{"index": {"fields": ["type", "age"]}, "ddoc": "bench-type-age", "name": "type-age", "type": "json"}`,
	`{"index": {"fields": ["score"]}, "ddoc": "bench-score", "name": "score", "type": "json"}`,
}

// findQueries returns n queries of each shape: an equality on both fields
// of the first index (limit 20, ~200 matches per 100k docs), and a range on
// the second with a sort and a limit of 20.
func findQueries(n int) (eq, rng []string) {
	for i := range n {
		eq = append(eq, fmt.Sprintf(`{"selector": {"type": %q, "age": %d}, "limit": 20}`, kinds[i%len(kinds)], 18+(i*7)%80))
		rng = append(rng, fmt.Sprintf(`{"selector": {"score": {"$gt": %d}}, "sort": [{"score": "asc"}], "limit": 20}`, (i*7919)%900))
	}
	return eq, rng
}

// findChecked is how many answers of each shape must agree across
// contenders.
const findChecked = 10

// findPhase runs the queries on the stores the pulls filled and on the
// server, and checks the contenders return the same documents.
func (b *bench) findPhase(ctx context.Context) {
	n := b.cfg.FindQueries
	eq, rng := findQueries(n)
	var runs []*FindRun
	if b.cfg.Contenders["settee"] && b.res.Pull != nil && b.res.Pull.Settee != nil {
		b.logf("find: settee (localdb/query on the pulled store)")
		if r, err := findSettee(ctx, b.setteeDB, eq, rng); err != nil {
			b.fail("find settee", err)
		} else {
			runs = append(runs, r)
		}
	}
	if b.cfg.Contenders["pouchdb"] && b.res.Pull != nil && b.res.Pull.PouchDB != nil && b.cfg.PouchAdapter == "leveldb" {
		b.logf("find: pouchdb (pouchdb-find on the pulled leveldb store)")
		if r, err := b.findPouch(ctx, eq, rng); err != nil {
			b.fail("find pouchdb", err)
		} else {
			runs = append(runs, r)
		}
	}
	name := "pouchdb-server"
	switch {
	case b.cfg.Couch != "":
		name = "couchdb"
	case b.cfg.Server == "settee":
		name = "settee serve"
	}
	b.logf("find: %s (POST _find over HTTP)", name)
	if r, err := findHTTP(ctx, b.src, eq, rng); err != nil {
		b.fail("find "+name, err)
	} else {
		r.Contender = name
		runs = append(runs, r)
	}
	for _, r := range runs[1:] {
		if !slices.EqualFunc(r.ids, runs[0].ids, slices.Equal[[]string]) {
			b.fail("find: answers agree", fmt.Errorf("%s and %s return different documents", runs[0].Contender, r.Contender))
			continue
		}
		b.check(fmt.Sprintf("find: %s returns the same documents as %s for %d queries of each shape", r.Contender, runs[0].Contender, findChecked))
	}
	b.res.Find = runs
}

// findSettee builds the indexes and times the queries in this process,
// through the library an app calls.
func findSettee(ctx context.Context, path string, eq, rng []string) (*FindRun, error) {
	db, err := localdb.Open(path, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &FindRun{Contender: "settee", Queries: len(eq)}
	t0 := time.Now()
	for _, ix := range findIndexes {
		if _, err := query.CreateIndex(ctx, db, []byte(ix)); err != nil {
			return nil, fmt.Errorf("create index: %w", err)
		}
	}
	run := func(q string) ([]json.RawMessage, error) {
		res, err := query.Find(ctx, db, []byte(q))
		if err != nil {
			return nil, err
		}
		return res.Docs, nil
	}
	// The first query of each shape, untimed, as find.js and findHTTP
	// run them (there, to build the indexes).
	return r.buildAndTime(t0, eq, rng, run)
}

// findHTTP creates the indexes with POST _index and times POST _find.
func findHTTP(ctx context.Context, db string, eq, rng []string) (*FindRun, error) {
	r := &FindRun{Queries: len(eq)}
	run := func(q string) ([]json.RawMessage, error) {
		var out struct {
			Docs []json.RawMessage `json:"docs"`
		}
		if err := httpDo(ctx, http.MethodPost, db+"/_find", strings.NewReader(q), "application/json", &out); err != nil {
			return nil, err
		}
		return out.Docs, nil
	}
	t0 := time.Now()
	for _, ix := range findIndexes {
		if err := httpDo(ctx, http.MethodPost, db+"/_index", strings.NewReader(ix), "application/json", nil); err != nil {
			return nil, err
		}
	}
	// Servers build an index on its first query.
	return r.buildAndTime(t0, eq, rng, run)
}

// buildAndTime runs the first query of each shape untimed, counts the
// time since t0 as the indexes' build, then times the queries.
func (r *FindRun) buildAndTime(t0 time.Time, eq, rng []string, run func(string) ([]json.RawMessage, error)) (*FindRun, error) {
	for _, q := range []string{eq[0], rng[0]} {
		if _, err := run(q); err != nil {
			return nil, err
		}
	}
	r.IndexBuildSeconds = time.Since(t0).Seconds()
	if err := r.time(eq, rng, run); err != nil {
		return nil, err
	}
	return r, nil
}

// findPouch runs bench/find.js on the pulled leveldb store.
func (b *bench) findPouch(ctx context.Context, eq, rng []string) (*FindRun, error) {
	qf := filepath.Join(b.dir, "find-queries.json")
	body, err := json.Marshal(map[string]any{"indexes": findIndexes, "eq": eq, "range": rng, "checked": findChecked})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(qf, body, 0o644); err != nil {
		return nil, err
	}
	script := filepath.Join(b.cfg.Root, "bench", "find.js")
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", script, "--local", b.pouchDir, "--queries", qf)
	cmd.Dir = b.cfg.Root
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, bytes.TrimSpace(errb.Bytes()))
	}
	var res struct {
		Build float64    `json:"index_build_seconds"`
		Eq    []float64  `json:"eq_ms"`
		Range []float64  `json:"range_ms"`
		IDs   [][]string `json:"ids"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("find.js answer: %w", err)
	}
	r := &FindRun{Contender: "pouchdb", Queries: len(res.Eq), IndexBuildSeconds: res.Build, ids: res.IDs}
	r.EqP50Ms, r.EqP99Ms = percentiles(res.Eq)
	r.RangeP50Ms, r.RangeP99Ms = percentiles(res.Range)
	return r, nil
}

// time runs every query once, in turn, keeping the latencies and the
// first answers' ids. Only run is timed (bench/find.js times db.find
// alone); reading the ids out of the answers is not.
func (r *FindRun) time(eq, rng []string, run func(string) ([]json.RawMessage, error)) error {
	for _, shape := range []struct {
		qs       []string
		p50, p99 *float64
	}{{eq, &r.EqP50Ms, &r.EqP99Ms}, {rng, &r.RangeP50Ms, &r.RangeP99Ms}} {
		lat := make([]float64, 0, len(shape.qs))
		for i, q := range shape.qs {
			t0 := time.Now()
			docs, err := run(q)
			if err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
			if i < findChecked {
				ids, err := docIDs(docs)
				if err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
				r.ids = append(r.ids, ids)
			}
		}
		*shape.p50, *shape.p99 = percentiles(lat)
	}
	return nil
}

// percentiles returns the median and the 99th percentile.
func percentiles(ms []float64) (p50, p99 float64) {
	if len(ms) == 0 {
		return 0, 0
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

func docIDs(docs []json.RawMessage) ([]string, error) {
	ids := make([]string, len(docs))
	for i, d := range docs {
		var v struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(d, &v); err != nil {
			return nil, err
		}
		ids[i] = v.ID
	}
	return ids, nil
}

// findTargets adds the query targets.
func (r *Results) findTargets() {
	var settee, pouch *FindRun
	for _, f := range r.Find {
		switch f.Contender {
		case "settee":
			settee = f
		case "pouchdb":
			pouch = f
		}
	}
	if settee == nil {
		return
	}
	r.addTarget("find: equality, 20 rows, p50", "<= 1 ms", settee.EqP50Ms, "ms", settee.EqP50Ms <= 1)
	r.addTarget("find: range + sort + limit 20, p50", "<= 2 ms", settee.RangeP50Ms, "ms", settee.RangeP50Ms <= 2)
	if r.Meta.Docs >= 100000 {
		v := settee.IndexBuildSeconds / 2 * 100000 / float64(r.Meta.Docs)
		r.addTarget("find: build one index, per 100k docs", "<= 3 s", v, "s", v <= 3)
	}
	if pouch != nil {
		v := min(ratio(pouch.EqP50Ms, settee.EqP50Ms), ratio(pouch.RangeP50Ms, settee.RangeP50Ms))
		r.addTarget("find: p50 vs pouchdb-find (the lower of both shapes)", ">= 20x", v, "x", v >= 20)
	}
}

// writeFindTable prints phase find, if it ran.
func writeFindTable(w io.Writer, r *Results) {
	if len(r.Find) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| find\t index build s (2 indexes)\t equality p50 ms\t p99 ms\t range+sort+limit p50 ms\t p99 ms\t queries each\t")
	fmt.Fprintln(tw, "|---\t---:\t---:\t---:\t---:\t---:\t---:\t")
	for _, f := range r.Find {
		fmt.Fprintf(tw, "| %s\t %.2f\t %.3f\t %.3f\t %.3f\t %.3f\t %d\t\n", f.Contender, f.IndexBuildSeconds, f.EqP50Ms, f.EqP99Ms, f.RangeP50Ms, f.RangeP99Ms, f.Queries)
	}
	tw.Flush()
	fmt.Fprintln(w)
}
