package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// ReplRun is one hub of the replicator phase: -repl-dbs databases, each
// replicated continuously to one upstream by a _replicator document the
// hub's own scheduler runs.
type ReplRun struct {
	// Hub is "settee serve" or "couchdb".
	Hub string `json:"hub"`
	DBs int    `json:"dbs"`
	// CatchUpSeconds is from writing the replication documents until every
	// upstream database holds its database's documents.
	CatchUpSeconds float64 `json:"catch_up_seconds"`
	// Seconds is the idle window; CPUPerMinute the hub process's CPU over
	// it (schedstat, every thread), per minute; Wakeups its threads'
	// voluntary context switches.
	Seconds          float64 `json:"seconds"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	CPUPerMinute     float64 `json:"cpu_seconds_per_minute"`
	Wakeups          int64   `json:"wakeups"`
	WakeupsPerMinute float64 `json:"wakeups_per_minute"`
	RSS              int64   `json:"rss_bytes"`
	// BaselineCPUPerMinute and BaselineWakeupsPerMinute are the hub's
	// over -repl-baseline-seconds with its databases and no jobs, before
	// the replication documents are written: the server's own idle cost.
	BaselineSeconds          float64 `json:"baseline_seconds"`
	BaselineCPUPerMinute     float64 `json:"baseline_cpu_seconds_per_minute"`
	BaselineWakeupsPerMinute float64 `json:"baseline_wakeups_per_minute"`
	// UpstreamCPUPerMinute is the upstream's CPU over the same window.
	UpstreamCPUPerMinute float64 `json:"upstream_cpu_seconds_per_minute"`
	// Samples writes on the hub, each timed from the start of the write to
	// its arrival in the upstream database (a longpoll _changes feed there).
	Samples      int     `json:"samples"`
	LatencyP50Ms float64 `json:"latency_p50_ms"`
	LatencyP99Ms float64 `json:"latency_p99_ms"`
	LatencyMaxMs float64 `json:"latency_max_ms"`
}

// replHub is a hub of the replicator phase.
type replHub struct {
	name string
	url  string // root URL with the admin's credentials
	pid  int    // 0: unknown (no CPU figures)
}

// replicatorPhase measures settee serve's scheduler and, with -couch and
// -couch-pid, CouchDB's, one after the other, against one upstream
// settee serve of their own (so the hub's CPU is the hub's alone).
func (b *bench) replicatorPhase(ctx context.Context) error {
	cli := filepath.Join(b.dir, "settee-cli")
	b.logf("replicator: building the settee CLI")
	build := exec.CommandContext(ctx, "go", "build", "-o", cli, "./cmd/settee")
	build.Dir = b.cfg.Root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build cmd/settee: %w\n%s", err, out)
	}
	up, upURL, err := startSetteeServe(ctx, cli, filepath.Join(b.dir, "repl-upstream"))
	if err != nil {
		return fmt.Errorf("upstream settee serve: %w", err)
	}
	defer up.Stop()
	hub, hubURL, err := startSetteeServe(ctx, cli, filepath.Join(b.dir, "repl-hub"))
	if err != nil {
		return fmt.Errorf("hub settee serve: %w", err)
	}
	defer hub.Stop()
	hubs := []replHub{{name: "settee serve", url: hubURL, pid: hub.cmd.Process.Pid}}
	if b.cfg.Couch != "" {
		hubs = append(hubs, replHub{name: "couchdb", url: strings.TrimRight(b.cfg.Couch, "/"), pid: b.cfg.CouchPID})
	}
	for _, h := range hubs {
		if err := b.replicatorHub(ctx, h, up, upURL); err != nil {
			b.fail("replicator on "+h.name, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// startSetteeServe starts the CLI's settee serve over dir with an admin
// of its own, and returns it with its root URL carrying the admin's
// credentials.
func startSetteeServe(ctx context.Context, cli, dir string) (*pouchServer, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	key := make([]byte, 12)
	if _, err := rand.Read(key); err != nil {
		return nil, "", err
	}
	pw := hex.EncodeToString(key)
	s, err := startServerProc(ctx, func(port int) (*exec.Cmd, error) {
		cmd := exec.Command(cli, "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--user", "admin", dir)
		cmd.Env = append(os.Environ(), "SETTEE_PASSWORD="+pw)
		return cmd, nil
	})
	if err != nil {
		return nil, "", err
	}
	return s, strings.Replace(s.URL, "http://", "http://admin:"+pw+"@", 1), nil
}

// replicatorHub runs one hub: its databases and replication documents,
// the catch-up, the idle window, the latency samples, then removes them.
func (b *bench) replicatorHub(ctx context.Context, h replHub, up *pouchServer, upURL string) error {
	tag := strings.ReplaceAll(h.name, " ", "-")
	n := b.cfg.ReplDBs
	src := func(i int) string { return fmt.Sprintf("%s-repl-%02d", b.cfg.DBPrefix, i) }
	tgt := func(i int) string { return fmt.Sprintf("%s/%s-repl-%s-%02d", upURL, b.cfg.DBPrefix, tag, i) }
	defer func() {
		if b.cfg.Keep {
			return
		}
		// The jobs first, so that none recreates or writes to a database.
		ctx := context.Background()
		for i := 0; i < n; i++ {
			docURL := h.url + "/_replicator/" + src(i)
			var doc struct {
				Rev string `json:"_rev"`
			}
			if httpDo(ctx, http.MethodGet, docURL, nil, "", &doc) == nil {
				_ = httpDo(ctx, http.MethodDelete, docURL+"?rev="+doc.Rev, nil, "", nil)
			}
		}
		for i := 0; i < n; i++ {
			_ = deleteDB(ctx, h.url+"/"+src(i))
			_ = deleteDB(ctx, tgt(i))
		}
	}()
	const docsPerDB = 5
	for i := 0; i < n; i++ {
		if err := createDB(ctx, h.url+"/"+src(i)); err != nil {
			return err
		}
		if err := createDB(ctx, tgt(i)); err != nil {
			return err
		}
		var docs []string
		for d := 0; d < docsPerDB; d++ {
			docs = append(docs, fmt.Sprintf(`{"_id":"doc-%02d","n":%d,"text":"written before the replication starts"}`, d, d))
		}
		body := `{"docs":[` + strings.Join(docs, ",") + `]}`
		if err := httpDo(ctx, http.MethodPost, h.url+"/"+src(i)+"/_bulk_docs", strings.NewReader(body), "application/json", nil); err != nil {
			return err
		}
	}
	run := &ReplRun{Hub: h.name, DBs: n}
	if b.cfg.ReplBaseline > 0 && h.pid > 0 {
		b.logf("replicator on %s: measuring %g s without jobs", h.name, b.cfg.ReplBaseline)
		cpu0, wake0, start := procCPUPrecise(h.pid), procWakeups(h.pid), time.Now()
		if err := sleepCtx(ctx, time.Duration(b.cfg.ReplBaseline*float64(time.Second))); err != nil {
			return err
		}
		run.BaselineSeconds = time.Since(start).Seconds()
		run.BaselineCPUPerMinute = (procCPUPrecise(h.pid) - cpu0) / run.BaselineSeconds * 60
		run.BaselineWakeupsPerMinute = float64(procWakeups(h.pid)-wake0) / run.BaselineSeconds * 60
	}
	began := time.Now()
	for i := 0; i < n; i++ {
		doc, _ := json.Marshal(map[string]any{"source": h.url + "/" + src(i), "target": tgt(i), "continuous": true})
		if err := httpDo(ctx, http.MethodPut, h.url+"/_replicator/"+src(i), strings.NewReader(string(doc)), "application/json", nil); err != nil {
			return err
		}
	}
	b.logf("replicator on %s: %d databases, %d continuous _replicator documents written; waiting for the upstream to catch up", h.name, n, n)
	for i := 0; i < n; i++ {
		if err := waitDocCount(ctx, tgt(i), docsPerDB, 120*time.Second); err != nil {
			return err
		}
	}
	run.CatchUpSeconds = time.Since(began).Seconds()
	if err := checkJobsRunning(ctx, h.url, n); err != nil {
		return err
	}
	b.logf("replicator on %s: caught up in %.1f s", h.name, run.CatchUpSeconds)
	// Let start-up work (first checkpoints, connection set-up) end.
	if err := sleepCtx(ctx, 5*time.Second); err != nil {
		return err
	}
	upPID := up.cmd.Process.Pid
	cpu0, wake0, up0 := procCPUPrecise(h.pid), procWakeups(h.pid), procCPUPrecise(upPID)
	start := time.Now()
	b.logf("replicator on %s: measuring %g s idle", h.name, b.cfg.ReplSeconds)
	if err := sleepCtx(ctx, time.Duration(b.cfg.ReplSeconds*float64(time.Second))); err != nil {
		return err
	}
	run.Seconds = time.Since(start).Seconds()
	if h.pid > 0 {
		if err := syscall.Kill(h.pid, 0); err != nil {
			return fmt.Errorf("the hub (pid %d) is gone: %w", h.pid, err)
		}
		run.CPUSeconds, run.Wakeups = procCPUPrecise(h.pid)-cpu0, procWakeups(h.pid)-wake0
		run.CPUPerMinute = run.CPUSeconds / run.Seconds * 60
		run.WakeupsPerMinute = float64(run.Wakeups) / run.Seconds * 60
		run.RSS = procStatusBytes(h.pid, "VmRSS:")
	}
	run.UpstreamCPUPerMinute = (procCPUPrecise(upPID) - up0) / run.Seconds * 60
	b.logf("replicator on %s: idle %.4f CPU-s/min, %.0f wakeups/min (without jobs %.4f, %.0f; upstream %.4f CPU-s/min)", h.name,
		run.CPUPerMinute, run.WakeupsPerMinute, run.BaselineCPUPerMinute, run.BaselineWakeupsPerMinute, run.UpstreamCPUPerMinute)

	rng := mrand.New(mrand.NewPCG(b.cfg.Seed, uint64(len(h.name))))
	var lat []float64
	for k := 0; k < b.cfg.ReplSamples; k++ {
		i := rng.IntN(n)
		ms, err := timeArrival(ctx, h.url+"/"+src(i), tgt(i), fmt.Sprintf("lat-%03d", k))
		if err != nil {
			return fmt.Errorf("latency sample %d (database %d): %w", k, i, err)
		}
		lat = append(lat, ms)
		// Spaced writes: each finds the jobs idle, as a hub's writes do.
		if err := sleepCtx(ctx, time.Duration(100+rng.IntN(300))*time.Millisecond); err != nil {
			return err
		}
	}
	run.Samples = len(lat)
	run.LatencyP50Ms, run.LatencyP99Ms = percentiles(lat)
	for _, v := range lat {
		run.LatencyMaxMs = max(run.LatencyMaxMs, v)
	}
	b.logf("replicator on %s: write -> upstream p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d samples)", h.name, run.LatencyP50Ms, run.LatencyP99Ms, run.LatencyMaxMs, run.Samples)
	b.res.Replicator = append(b.res.Replicator, run)
	b.check(fmt.Sprintf("replicator on %s: %d writes arrived upstream", h.name, run.Samples))
	return nil
}

// checkJobsRunning checks that the hub's _scheduler/docs reports want
// replication documents, every one running.
func checkJobsRunning(ctx context.Context, hubURL string, want int) error {
	var docs struct {
		Docs []struct {
			DocID string `json:"doc_id"`
			State string `json:"state"`
		} `json:"docs"`
	}
	if err := httpDo(ctx, http.MethodGet, hubURL+"/_scheduler/docs/_replicator", nil, "", &docs); err != nil {
		return err
	}
	running := 0
	for _, d := range docs.Docs {
		if d.State == "running" {
			running++
		}
	}
	if running != want {
		return fmt.Errorf("_scheduler/docs: %d of %d documents running, want %d: %+v", running, len(docs.Docs), want, docs.Docs)
	}
	return nil
}

// waitDocCount waits until the database at dbURL holds want documents.
func waitDocCount(ctx context.Context, dbURL string, want int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		info, err := dbInfo(ctx, dbURL)
		if err == nil && info.DocCount >= want {
			return nil
		}
		if time.Now().After(deadline) {
			got := int64(-1)
			if info != nil {
				got = info.DocCount
			}
			return fmt.Errorf("%s holds %d documents after %s, want %d (%v)", redact(dbURL), got, limit, want, err)
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// timeArrival writes the document id on the hub database src and returns
// the milliseconds from the start of the write until the upstream
// database tgt's longpoll _changes feed shows it.
func timeArrival(ctx context.Context, src, tgt, id string) (float64, error) {
	var info struct {
		UpdateSeq json.RawMessage `json:"update_seq"`
	}
	if err := httpDo(ctx, http.MethodGet, tgt, nil, "", &info); err != nil {
		return 0, err
	}
	since := strings.Trim(string(info.UpdateSeq), `"`)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The feed starts from before the write: it cannot miss the change,
	// whenever its request reaches the upstream.
	arrived := make(chan error, 1)
	go func() { arrived <- waitChange(ctx, tgt, since, id) }()
	t0 := time.Now()
	if err := httpDo(ctx, http.MethodPut, src+"/"+id, strings.NewReader(`{"written":"on the hub"}`), "application/json", nil); err != nil {
		return 0, err
	}
	if err := <-arrived; err != nil {
		return 0, err
	}
	return float64(time.Since(t0).Microseconds()) / 1000, nil
}

// waitChange follows tgt's changes from since with longpoll requests
// until id shows.
func waitChange(ctx context.Context, tgt, since, id string) error {
	for {
		url := fmt.Sprintf("%s/_changes?feed=longpoll&timeout=20000&since=%s", tgt, since)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		var feed struct {
			Results []struct {
				ID string `json:"id"`
			} `json:"results"`
			LastSeq json.RawMessage `json:"last_seq"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&feed)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("_changes of %s: %w", redact(tgt), err)
		}
		for _, r := range feed.Results {
			if r.ID == id {
				return nil
			}
		}
		since = strings.Trim(string(feed.LastSeq), `"`)
	}
}

// writeReplTable prints the replicator phase, one row per hub, and the
// ratio of settee serve's figures to CouchDB's.
func writeReplTable(w io.Writer, r *Results) {
	if len(r.Replicator) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| _replicator hub\t dbs\t catch-up s\t idle s\t hub CPU s/min\t wakeups/min\t without jobs: CPU s/min\t wakeups/min\t RSS MB\t upstream CPU s/min\t write->upstream p50 ms\t p99 ms\t max ms\t")
	fmt.Fprintln(tw, "|---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t")
	for _, l := range r.Replicator {
		fmt.Fprintf(tw, "| %s\t %d\t %.1f\t %.0f\t %.4f\t %.0f\t %.4f\t %.0f\t %.1f\t %.4f\t %.1f\t %.1f\t %.1f\t\n", l.Hub, l.DBs, l.CatchUpSeconds, l.Seconds,
			l.CPUPerMinute, l.WakeupsPerMinute, l.BaselineCPUPerMinute, l.BaselineWakeupsPerMinute, mb(l.RSS), l.UpstreamCPUPerMinute, l.LatencyP50Ms, l.LatencyP99Ms, l.LatencyMaxMs)
	}
	if s, c := r.replHub("settee serve"), r.replHub("couchdb"); s != nil && c != nil {
		fmt.Fprintf(tw, "| settee / couchdb\t \t %.2fx\t \t %.2fx\t %.2fx\t %.2fx\t %.2fx\t %.2fx\t \t %.2fx\t %.2fx\t %.2fx\t\n", ratio(s.CatchUpSeconds, c.CatchUpSeconds),
			ratio(s.CPUPerMinute, c.CPUPerMinute), ratio(s.WakeupsPerMinute, c.WakeupsPerMinute),
			ratio(s.BaselineCPUPerMinute, c.BaselineCPUPerMinute), ratio(s.BaselineWakeupsPerMinute, c.BaselineWakeupsPerMinute), ratio(float64(s.RSS), float64(c.RSS)),
			ratio(s.LatencyP50Ms, c.LatencyP50Ms), ratio(s.LatencyP99Ms, c.LatencyP99Ms), ratio(s.LatencyMaxMs, c.LatencyMaxMs))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func (r *Results) replHub(name string) *ReplRun {
	for _, l := range r.Replicator {
		if l.Hub == name {
			return l
		}
	}
	return nil
}

// replTargets: settee serve's scheduler at most CouchDB's idle CPU and
// write-to-upstream latency (p50) for the same jobs.
func (r *Results) replTargets() {
	s, c := r.replHub("settee serve"), r.replHub("couchdb")
	if s == nil || c == nil || c.CPUPerMinute == 0 {
		return
	}
	r.addTarget("replicator idle CPU, settee / CouchDB hub", "<= 1x", ratio(s.CPUPerMinute, c.CPUPerMinute), "x", s.CPUPerMinute <= c.CPUPerMinute)
	r.addTarget("replicator write->upstream p50, settee / CouchDB hub", "<= 1x", ratio(s.LatencyP50Ms, c.LatencyP50Ms), "x", s.LatencyP50Ms <= c.LatencyP50Ms)
}
