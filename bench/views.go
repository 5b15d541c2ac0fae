package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"time"
)

// Phase views (only when named): JavaScript map/reduce views side by side
// on settee serve (the server package in a child process, over its own
// SQLite files), Settee in this process (localdb/query.View) and, with
// -couch, CouchDB. The dataset (bodies and revision trees, without the
// attachments, which a view never reads) is loaded into each; then each
// design document's first build (a query with limit=0), the incremental
// update after the incremental step's edits (1% of the documents), and the
// query shapes' latencies, each query run on every contender in turn so
// that all see the same machine load.

// ViewsRun is one contender's figures in phase views.
type ViewsRun struct {
	// Contender is "settee serve", "settee (in process)" or "couchdb".
	Contender string `json:"contender"`
	// LoadSeconds is the dataset's load (new_edits=false batches).
	LoadSeconds float64      `json:"load_seconds"`
	Builds      []*ViewBuild `json:"builds"`
	Shapes      []*ViewShape `json:"shapes"`
	// RSS is settee serve's resident set at the end (0 for the others).
	RSS int64 `json:"rss_bytes,omitempty"`
}

// ViewBuild is one design document's build and incremental update.
type ViewBuild struct {
	DDoc   string `json:"ddoc"`
	Reduce string `json:"reduce"`
	// Seconds and CPUSeconds: the first query (limit=0) after the design
	// document was saved. CPU is the contender's process (with CouchDB's
	// JavaScript processes); 0 when unknown.
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	DocsPerSec float64 `json:"docs_per_sec"`
	// Writes documents were edited, then IncrementalMs is the first query
	// (limit=0) after them.
	Writes           int     `json:"writes"`
	IncrementalMs    float64 `json:"incremental_ms"`
	IncrementalCPUMs float64 `json:"incremental_cpu_ms"`
}

// ViewShape is one query shape's latencies.
type ViewShape struct {
	Name    string  `json:"name"`
	Queries int     `json:"queries"`
	P50Ms   float64 `json:"p50_ms"`
	P99Ms   float64 `json:"p99_ms"`
	// CPUMsPerQuery is the contender's CPU over the shape's queries.
	CPUMsPerQuery float64 `json:"cpu_ms_per_query"`
}

// viewMap emits every typed document under [type, age] with its score.
const viewMap = `function (doc) { if (doc.type) { emit([doc.type, doc.age], doc.score); } }`

// viewDDoc is one design document of the phase.
type viewDDoc struct {
	name, view, reduce string
	// shapes are the names of the query shapes run on it.
	shapes []string
}

// viewDDocs are the built-in reduce's and the JavaScript reduce's design
// documents (both with the same map). Each is its own index, built on its
// own. Automatic updates are off for CouchDB's background indexer, so
// that the timed queries do the builds.
var viewDDocs = []viewDDoc{
	{"bench-stats", "by_type_age", "_stats", []string{"key", "range20", "group1", "reduce-range", "include_docs"}},
	{"bench-jsreduce", "by_type_age", "function (keys, values, rereduce) { return sum(values); }", []string{"group1", "reduce-range"}},
}

func (d viewDDoc) body() []byte {
	return []byte(mustJSON(map[string]any{
		"language": "javascript",
		"options":  map[string]any{"autoupdate": false},
		"views":    map[string]any{d.view: map[string]any{"map": viewMap, "reduce": d.reduce}},
	}))
}

// viewQuery returns query i of a shape.
func viewQuery(shape string, i int) url.Values {
	kind := kinds[i%len(kinds)]
	age := 18 + (i*7)%76
	key := func(a int) string { return mustJSON([]any{kind, a}) }
	q := url.Values{}
	switch shape {
	case "key": // ~200 rows per 100k documents
		q.Set("key", key(age))
		q.Set("reduce", "false")
	case "range20", "include_docs":
		q.Set("startkey", key(age))
		q.Set("endkey", key(age+4))
		q.Set("limit", "20")
		q.Set("reduce", "false")
		if shape == "include_docs" {
			q.Set("include_docs", "true")
		}
	case "group1": // one row reducing a sixth of the rows
		q.Set("startkey", mustJSON([]any{kind}))
		q.Set("endkey", mustJSON([]any{kind, map[string]any{}}))
		q.Set("group_level", "1")
	case "reduce-range": // one row reducing 20 ages of one type
		q.Set("startkey", key(age))
		q.Set("endkey", key(age+20))
	}
	return q
}

// viewShapeTitles describe the shapes in the table.
var viewShapeTitles = map[string]string{
	"key":          "key query, reduce=false",
	"range20":      "5-age range, limit 20, reduce=false",
	"group1":       "group_level=1 over one type",
	"reduce-range": "reduce over a 20-age range",
	"include_docs": "5-age range, limit 20, include_docs",
}

// viewChecked is how many answers of each shape must agree across
// contenders.
const viewChecked = 5

// viewTarget is one contender of phase views.
type viewTarget interface {
	name() string
	// load writes the dataset (without attachments) with new_edits=false.
	load(ctx context.Context, ds *Dataset) error
	putDesign(ctx context.Context, name string, body []byte) error
	// query runs one query; answer encodes its result as JSON (untimed).
	query(ctx context.Context, ddoc, view string, q url.Values) (answer func() ([]byte, error), err error)
	// edit applies the incremental step's edits.
	edit(ctx context.Context, ds *Dataset) (int, error)
	cpu() float64
	close()
}

// viewsPhase runs phase views.
func (b *bench) viewsPhase(ctx context.Context) error {
	var targets []viewTarget
	defer func() {
		for _, t := range targets {
			t.close()
		}
	}()
	b.logf("views: starting settee serve")
	s, err := startSetteeServer(ctx, filepath.Join(b.dir, "views-serve"), "")
	if err != nil {
		return fmt.Errorf("settee serve: %w", err)
	}
	targets = append(targets, &httpViews{label: "settee serve", db: s.URL + "/" + b.cfg.DBPrefix + "-views", cpuf: s.CPU, srv: s})
	if b.cfg.Contenders["settee"] {
		lt, err := openLocalViews(ctx, filepath.Join(b.dir, "views-local.db"))
		if err != nil {
			return err
		}
		targets = append(targets, lt)
	}
	if b.cfg.Couch != "" {
		pid := b.cfg.CouchPID
		targets = append(targets, &httpViews{label: "couchdb", db: b.server + "/" + b.cfg.DBPrefix + "-views", cpuf: func() float64 { return treeCPU(pid) }, keep: b.cfg.Keep})
	}
	runs := make([]*ViewsRun, len(targets))
	for k, t := range targets {
		runs[k] = &ViewsRun{Contender: t.name()}
		b.logf("views: loading %d documents into %s", b.ds.Count(), t.name())
		t0 := time.Now()
		if err := t.load(ctx, b.ds); err != nil {
			return fmt.Errorf("views: load %s: %w", t.name(), err)
		}
		runs[k].LoadSeconds = time.Since(t0).Seconds()
	}
	b.res.Views = runs
	live := 0
	for i := range b.ds.Count() {
		if g := b.ds.Doc(i); g.Kind != kindDeleted {
			live++
		}
	}
	for _, d := range viewDDocs {
		for k, t := range targets {
			bd, err := buildView(ctx, t, d, live)
			if err != nil {
				return fmt.Errorf("views: build %s on %s: %w", d.name, t.name(), err)
			}
			b.logf("views: %s first build on %s: %.2fs (%.0f docs/s), CPU %.2fs", d.name, t.name(), bd.Seconds, bd.DocsPerSec, bd.CPUSeconds)
			runs[k].Builds = append(runs[k].Builds, bd)
		}
	}
	for k, t := range targets {
		n, err := t.edit(ctx, b.ds)
		if err != nil {
			return fmt.Errorf("views: edits on %s: %w", t.name(), err)
		}
		for j, d := range viewDDocs {
			bd := runs[k].Builds[j]
			bd.Writes = n
			c0, t0 := t.cpu(), time.Now()
			if err := queryUntilBuilt(ctx, t, d, url.Values{"limit": {"0"}}); err != nil {
				return fmt.Errorf("views: incremental %s on %s: %w", d.name, t.name(), err)
			}
			bd.IncrementalMs = float64(time.Since(t0).Microseconds()) / 1000
			bd.IncrementalCPUMs = (t.cpu() - c0) * 1000
			b.logf("views: %s after %d writes on %s: %.1f ms", d.name, n, t.name(), bd.IncrementalMs)
		}
	}
	for _, d := range viewDDocs {
		for _, shape := range d.shapes {
			if err := b.timeViewShape(ctx, targets, runs, d, shape); err != nil {
				return err
			}
		}
	}
	runs[0].RSS = s.RSS()
	return b.vduWrites(ctx, targets)
}

// buildView saves the design document and times its first query.
func buildView(ctx context.Context, t viewTarget, d viewDDoc, live int) (*ViewBuild, error) {
	if err := t.putDesign(ctx, d.name, d.body()); err != nil {
		return nil, err
	}
	bd := &ViewBuild{DDoc: d.name, Reduce: d.reduce}
	c0, t0 := t.cpu(), time.Now()
	if err := queryUntilBuilt(ctx, t, d, url.Values{"limit": {"0"}}); err != nil {
		return nil, err
	}
	bd.Seconds = time.Since(t0).Seconds()
	bd.CPUSeconds = t.cpu() - c0
	bd.DocsPerSec = float64(live) / bd.Seconds
	return bd, nil
}

// viewBuildTries bounds the queries queryUntilBuilt sends.
const viewBuildTries = 30

// queryUntilBuilt runs a query until it answers: CouchDB answers 500
// timeout to a query that waits for a build longer than its
// request_timeout (60 s), and goes on building.
func queryUntilBuilt(ctx context.Context, t viewTarget, d viewDDoc, q url.Values) error {
	for try := 1; ; try++ {
		_, err := t.query(ctx, d.name, d.view, q)
		var se *statusError
		if err == nil || try == viewBuildTries || !errors.As(err, &se) || se.Status != http.StatusInternalServerError || se.Name() != "timeout" {
			return err
		}
	}
}

// timeViewShape runs the shape's queries, each on every contender in turn
// (the first contender rotating), and checks the first answers agree.
func (b *bench) timeViewShape(ctx context.Context, targets []viewTarget, runs []*ViewsRun, d viewDDoc, shape string) error {
	n := b.cfg.ViewQueries
	lat := make([][]float64, len(targets))
	cpu := make([]float64, len(targets))
	name := shape
	if d.reduce != "_stats" {
		name += " (JS reduce)"
	}
	b.logf("views: %d queries %s on %s", n, name, d.name)
	agreed := true
	for i := range n {
		q := viewQuery(shape, i)
		answers := make([][]byte, len(targets))
		for j := range targets {
			k := (i + j) % len(targets)
			t := targets[k]
			c0, t0 := t.cpu(), time.Now()
			answer, err := t.query(ctx, d.name, d.view, q)
			if err != nil {
				return fmt.Errorf("views: %s %s on %s: %w", name, q.Encode(), t.name(), err)
			}
			lat[k] = append(lat[k], float64(time.Since(t0).Microseconds())/1000)
			cpu[k] += t.cpu() - c0
			if i < viewChecked {
				if answers[k], err = answer(); err != nil {
					return err
				}
			}
		}
		if i < viewChecked {
			for k := 1; k < len(targets); k++ {
				if err := sameViewAnswers(answers[0], answers[k]); err != nil {
					agreed = false
					b.fail(fmt.Sprintf("views: %s %s", name, q.Encode()), fmt.Errorf("%s and %s differ: %w", targets[0].name(), targets[k].name(), err))
				}
			}
		}
	}
	for k := range targets {
		s := &ViewShape{Name: name, Queries: n, CPUMsPerQuery: cpu[k] * 1000 / float64(n)}
		s.P50Ms, s.P99Ms = percentiles(lat[k])
		runs[k].Shapes = append(runs[k].Shapes, s)
		b.logf("views: %s on %s: p50 %.2f ms, p99 %.2f ms", name, targets[k].name(), s.P50Ms, s.P99Ms)
	}
	if len(targets) > 1 && agreed {
		b.check(fmt.Sprintf("views: %s: the first %d answers agree across %d contenders", name, min(n, viewChecked), len(targets)))
	}
	return nil
}
