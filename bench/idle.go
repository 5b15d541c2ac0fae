package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
)

// IdleRun is one client's continuous two-way sync with an idle database,
// measured over the same window as the other clients of its server.
type IdleRun struct {
	Server string `json:"server"`
	// Client is "settee" (this commit's CLI, settee sync --continuous),
	// "settee (old)" (-idle-old's binary) or "pouchdb" (PouchDB 9's live
	// sync, bench/pouchdb.js sync).
	Client  string  `json:"client"`
	Seconds float64 `json:"seconds"`
	// CPUSeconds is the time the client process's threads ran over the
	// window (schedstat; user+system); CPUPerMinute the same per minute.
	CPUSeconds   float64 `json:"cpu_seconds"`
	CPUPerMinute float64 `json:"cpu_seconds_per_minute"`
	// Wakeups is the voluntary context switches of all the process's
	// threads over the window (each a thread that slept and was woken).
	Wakeups          int64   `json:"wakeups"`
	WakeupsPerMinute float64 `json:"wakeups_per_minute"`
	// RSS is the process's resident memory at the end of the window.
	RSS int64 `json:"rss_bytes"`
	// ServerCPUPerMinute is the server's CPU over the window, every
	// client of the window together (0 when unknown).
	ServerCPUPerMinute float64 `json:"server_cpu_seconds_per_minute"`
}

// idleClient is one client process of the idle phase.
type idleClient struct {
	name  string
	db    string // its database URL
	local string // its local store (settee) or directory (pouchdb)
	cmd   *exec.Cmd
	out   *lineBuffer
	ready func(string) bool // a stdout line saying it caught up
	cpu0  float64
	wake0 int64
}

// idlePhase runs every client against settee serve, pouchdb-server and,
// with -couch, CouchDB, one server after the other; the clients of one
// server run side by side over the same window.
func (b *bench) idlePhase(ctx context.Context) error {
	cli := filepath.Join(b.dir, "settee-cli")
	b.logf("idle: building the settee CLI")
	build := exec.CommandContext(ctx, "go", "build", "-o", cli, "./cmd/settee")
	build.Dir = b.cfg.Root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build cmd/settee: %w\n%s", err, out)
	}
	s, err := startSetteeServer(ctx, filepath.Join(b.dir, "idle-settee-data"), "")
	if err != nil {
		return fmt.Errorf("settee serve: %w", err)
	}
	defer s.Stop()
	p, err := startPouchServer(ctx, b.cfg.Root, b.dir)
	if err != nil {
		return fmt.Errorf("pouchdb-server: %w", err)
	}
	defer p.Stop()
	precise := func(s *pouchServer) cpuFunc {
		pid := s.cmd.Process.Pid
		return func() float64 { return procCPUPrecise(pid) }
	}
	hubs := []hubServer{{name: "settee serve", url: s.URL, cpu: precise(s)}, {name: "pouchdb-server", url: p.URL, cpu: precise(p)}}
	if b.cfg.Couch != "" {
		cpu := func() float64 {
			if b.cfg.CouchPID <= 0 {
				return 0
			}
			return procCPUPrecise(b.cfg.CouchPID)
		}
		hubs = append(hubs, hubServer{name: "couchdb", url: strings.TrimRight(b.cfg.Couch, "/"), cpu: cpu})
	}
	for _, h := range hubs {
		if err := b.idleServer(ctx, h, cli); err != nil {
			b.fail("idle via "+h.name, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

func (b *bench) idleServer(ctx context.Context, h hubServer, cli string) error {
	type spec struct{ name, bin string }
	specs := []spec{{"settee", cli}}
	if b.cfg.IdleOld != "" {
		specs = append(specs, spec{"settee (old)", b.cfg.IdleOld})
	}
	specs = append(specs, spec{"pouchdb", ""})
	tag := strings.ReplaceAll(h.name, " ", "-")
	var clients []*idleClient
	defer func() {
		for _, c := range clients {
			stopGroup(c.cmd)
		}
	}()
	for i, sp := range specs {
		dbURL := fmt.Sprintf("%s/%s-idle-%d", h.url, b.cfg.DBPrefix, i)
		if err := createDB(ctx, dbURL); err != nil {
			return err
		}
		if !b.cfg.Keep {
			defer func() { _ = deleteDB(context.Background(), dbURL) }()
		}
		for n := 0; n < 10; n++ {
			body := fmt.Sprintf(`{"n":%d,"text":"a document the sync brings before it idles"}`, n)
			if err := httpDo(ctx, "PUT", fmt.Sprintf("%s/doc-%02d", dbURL, n), strings.NewReader(body), "application/json", nil); err != nil {
				return err
			}
		}
		c := &idleClient{name: sp.name, db: dbURL, out: &lineBuffer{}}
		if sp.bin != "" {
			c.local = filepath.Join(b.dir, fmt.Sprintf("idle-%s-%d.db", tag, i))
			c.cmd = exec.Command(sp.bin, "sync", "--continuous", c.local, dbURL)
			// Plain output: "pull: idle", "push: idle" once caught up.
			seen := map[string]bool{}
			c.ready = func(line string) bool {
				if dir, state, ok := strings.Cut(line, ": "); ok && state == "idle" {
					seen[dir] = true
				}
				return seen["pull"] && seen["push"]
			}
		} else {
			c.local = filepath.Join(b.dir, fmt.Sprintf("idle-%s-pouchdb", tag))
			c.cmd = pouchCmd(context.Background(), b.cfg.Root, "sync", "--remote", dbURL, "--local", c.local)
			c.ready = func(line string) bool { return strings.Contains(line, `"paused":true`) }
		}
		c.cmd.Stdout = c.out
		c.cmd.Stderr = c.out
		c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.cmd.Start(); err != nil {
			return fmt.Errorf("%s: %w", sp.name, err)
		}
		clients = append(clients, c)
	}
	b.logf("idle via %s: %d clients started, waiting for them to catch up", h.name, len(clients))
	deadline := time.Now().Add(60 * time.Second)
	for _, c := range clients {
		for !c.out.any(c.ready) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not catch up in 60 s; output:\n%s", c.name, c.out.String())
			}
			if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
				return err
			}
		}
	}
	// Let start-up work (a checkpoint timer, the first collections) end.
	if err := sleepCtx(ctx, 5*time.Second); err != nil {
		return err
	}
	for _, c := range clients {
		c.cpu0, c.wake0 = procCPUPrecise(c.cmd.Process.Pid), procWakeups(c.cmd.Process.Pid)
	}
	srv0 := h.cpu()
	start := time.Now()
	b.logf("idle via %s: measuring %g s", h.name, b.cfg.IdleSeconds)
	if err := sleepCtx(ctx, time.Duration(b.cfg.IdleSeconds*float64(time.Second))); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	srvPerMin := (h.cpu() - srv0) / secs * 60
	for _, c := range clients {
		pid := c.cmd.Process.Pid
		if err := syscall.Kill(pid, 0); err != nil {
			return fmt.Errorf("%s exited during the window; output:\n%s", c.name, c.out.String())
		}
		cpu, wake := procCPUPrecise(pid)-c.cpu0, procWakeups(pid)-c.wake0
		run := &IdleRun{Server: h.name, Client: c.name, Seconds: secs, CPUSeconds: cpu, CPUPerMinute: cpu / secs * 60,
			Wakeups: wake, WakeupsPerMinute: float64(wake) / secs * 60, RSS: procStatusBytes(pid, "VmRSS:"), ServerCPUPerMinute: srvPerMin}
		b.res.Idle = append(b.res.Idle, run)
		b.logf("idle via %s: %s %.3f CPU-s/min, %.0f wakeups/min, RSS %.1f MB (server %.3f CPU-s/min)",
			h.name, c.name, run.CPUPerMinute, run.WakeupsPerMinute, mb(run.RSS), srvPerMin)
	}
	// The syncs were live, not stuck: a new document on the server reaches
	// each settee client's store.
	for _, c := range clients {
		if !strings.HasSuffix(c.local, ".db") {
			continue
		}
		if err := httpDo(ctx, "PUT", c.db+"/after-idle", strings.NewReader(`{"after":"idle"}`), "application/json", nil); err != nil {
			return err
		}
		if err := waitLocalDoc(ctx, c.local, "after-idle", 15*time.Second); err != nil {
			return fmt.Errorf("%s after the idle window: %w", c.name, err)
		}
		b.check(fmt.Sprintf("idle via %s: %s pulled a new document after the window", h.name, c.name))
	}
	return nil
}

// waitLocalDoc waits until the store at path (open in another process)
// holds the document id.
func waitLocalDoc(ctx context.Context, path, id string, limit time.Duration) error {
	db, err := localdb.Open(path, &localdb.Options{NoCreate: true, Watch: localdb.WatchLocal})
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(limit)
	for {
		if _, err := db.Get(ctx, id, localdb.GetOptions{}); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not in %s after %s", id, path, limit)
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
}

// procCPUPrecise is a process's CPU seconds so far to the nanosecond: the
// time its threads ran (/proc/<pid>/task/*/schedstat), where /proc's
// utime and stime count 10-ms ticks, too coarse for a minute of idling.
func procCPUPrecise(pid int) float64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(data)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			ns += v
		}
	}
	if ns == 0 {
		return procCPU(pid)
	}
	return float64(ns) / 1e9
}

// procWakeups is the voluntary context switches of all of a process's
// threads so far.
func procWakeups(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var n int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += k
			}
		}
	}
	return n
}

func stopGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// lineBuffer collects a child's output for scanning by line.
type lineBuffer struct{ testutil.SyncBuffer }

// String returns the output's tail, for messages.
func (l *lineBuffer) String() string { return string(tail(l.Bytes(), 4000)) }

// any reports whether fn holds for a complete line so far (fn sees the
// lines in order, from the first, at each call).
func (l *lineBuffer) any(fn func(string) bool) bool {
	sc := bufio.NewScanner(bytes.NewReader(l.Bytes()))
	for sc.Scan() {
		if fn(sc.Text()) {
			return true
		}
	}
	return false
}

// writeIdleTable prints the idle phase, one row per server and client.
func writeIdleTable(w io.Writer, r *Results) {
	if len(r.Idle) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| idle sync via\t client\t seconds\t CPU s/min\t wakeups/min\t RSS MB\t server CPU s/min (all clients)\t")
	fmt.Fprintln(tw, "|---\t---\t---:\t---:\t---:\t---:\t---:\t")
	for _, l := range r.Idle {
		fmt.Fprintf(tw, "| %s\t %s\t %.0f\t %.4f\t %.0f\t %.1f\t %.4f\t\n", l.Server, l.Client, l.Seconds, l.CPUPerMinute, l.WakeupsPerMinute, mb(l.RSS), l.ServerCPUPerMinute)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// idleTargets: settee's CLI at most PouchDB's CPU on the same server, at
// most 0.03 CPU-s a minute, and at most 20 MB resident.
func (r *Results) idleTargets() {
	for _, s := range r.Idle {
		if s.Client != "settee" {
			continue
		}
		r.addTarget("idle CPU via "+s.Server, "<= 0.03 s/min", s.CPUPerMinute, "s/min", s.CPUPerMinute <= 0.03)
		r.addTarget("idle RSS via "+s.Server, "<= 20 MB", mb(s.RSS), "MB", mb(s.RSS) <= 20)
		for _, p := range r.Idle {
			if p.Client == "pouchdb" && p.Server == s.Server {
				v := ratio(s.CPUPerMinute, p.CPUPerMinute)
				r.addTarget("idle CPU, settee / PouchDB via "+s.Server, "<= 1x", v, "x", s.CPUPerMinute <= p.CPUPerMinute)
			}
		}
	}
}
