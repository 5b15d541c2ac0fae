package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// LiveRun is one live workload (live latency or hub) against one hub.
type LiveRun struct {
	// Workload is "live" (device A writes, device B sees it) or "hub"
	// (many devices write at a steady rate, each sees the others').
	Workload string `json:"workload"`
	// Hub names the server the devices sync with.
	Hub string `json:"hub"`
	// OfferedPerSec is the write rate the devices were asked to keep
	// (hub only).
	OfferedPerSec float64 `json:"offered_writes_per_sec,omitempty"`
	// CheckpointSeconds is the devices' CheckpointInterval (0: default;
	// negative: after every batch).
	CheckpointSeconds float64 `json:"checkpoint_interval_seconds,omitempty"`
	liveStats
	// CPUSeconds is the devices' process (all devices' stores and syncs);
	// HubCPUSeconds the hub's during it (0 when unknown).
	CPUSeconds    float64 `json:"cpu_seconds"`
	HubCPUSeconds float64 `json:"hub_cpu_seconds,omitempty"`
}

// hubServer is a server the live workloads run against.
type hubServer struct {
	name string
	url  string  // root URL
	cpu  cpuFunc // the hub process's CPU seconds so far
}

// livePhases runs the live and hub workloads against settee serve
// (started here, over its own files) and, with -couch, against CouchDB.
func (b *bench) livePhases(ctx context.Context) error {
	b.logf("live workloads: starting settee serve as a hub")
	s, err := startSetteeServer(ctx, filepath.Join(b.dir, "hub-data"), "")
	if err != nil {
		return fmt.Errorf("settee serve: %w", err)
	}
	defer s.Stop()
	hubs := []hubServer{{name: "settee serve", url: s.URL, cpu: s.CPU}}
	if b.cfg.Couch != "" {
		hubs = append(hubs, hubServer{name: "couchdb", url: b.server, cpu: b.serverCPU})
	}
	cfg := b.cfg
	if cfg.CPUProfileDir != "" {
		if err := os.MkdirAll(cfg.CPUProfileDir, 0o755); err != nil {
			return err
		}
	}
	for _, w := range []string{"live", "hub"} {
		if !cfg.Phases[w] {
			continue
		}
		for _, h := range hubs {
			args := []string{w, "--dir", filepath.Join(b.dir, w+"-"+filepath.Base(h.url))}
			if w == "live" {
				args = append(args, "--writes", fmt.Sprint(cfg.LiveWrites))
			} else {
				args = append(args, "--devices", fmt.Sprint(cfg.HubDevices), "--rate", fmt.Sprint(cfg.HubRate), "--seconds", fmt.Sprint(cfg.HubSeconds))
			}
			if cfg.CPUProfileDir != "" {
				args = append(args, "--cpuprofile", filepath.Join(cfg.CPUProfileDir, fmt.Sprintf("%s-%s.pprof", w, strings.ReplaceAll(h.name, " ", "-"))))
			}
			if cfg.LiveCheckpoint != 0 {
				args = append(args, "--checkpoint-interval", cfg.LiveCheckpoint.String())
			}
			run := b.liveRun(ctx, w, h, args)
			if run == nil {
				continue
			}
			run.CheckpointSeconds = cfg.LiveCheckpoint.Seconds()
			if w == "hub" {
				run.OfferedPerSec = float64(cfg.HubDevices) * cfg.HubRate
			}
			b.res.Live = append(b.res.Live, run)
			if run.Deliveries != run.Expected {
				b.fail(fmt.Sprintf("%s via %s", w, h.name), fmt.Errorf("%d of %d deliveries arrived", run.Deliveries, run.Expected))
			} else {
				b.check(fmt.Sprintf("%s via %s: all %d deliveries arrived", w, h.name, run.Expected))
			}
		}
	}
	return ctx.Err()
}

// liveRun runs one workload's child against a fresh hub database.
func (b *bench) liveRun(ctx context.Context, workload string, h hubServer, args []string) *LiveRun {
	what := fmt.Sprintf("%s via %s", workload, h.name)
	dbURL := h.url + "/" + b.cfg.DBPrefix + "-" + workload
	if err := createDB(ctx, dbURL); err != nil {
		b.fail(what, err)
		return nil
	}
	if !b.cfg.Keep {
		defer func() { _ = deleteDB(context.Background(), dbURL) }()
	}
	cmd, err := setteeCmd(ctx, append(args, "--hub", dbURL)...)
	if err != nil {
		b.fail(what, err)
		return nil
	}
	b.logf("%s", what)
	cpu0 := h.cpu()
	run := &LiveRun{Workload: workload, Hub: h.name}
	cpu, err := runLine(cmd, b.verbose(), &run.liveStats)
	if err != nil {
		b.fail(what, err)
		return nil
	}
	run.CPUSeconds = cpu
	run.HubCPUSeconds = h.cpu() - cpu0
	b.logf("%s: %d writes in %.2fs (%.1f/s), p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d/%d deliveries, CPU %.2fs, hub CPU %.2fs",
		what, run.Writes, run.Seconds, run.WritesPerSec, run.P50Ms, run.P99Ms, run.MaxMs, run.Deliveries, run.Expected, run.CPUSeconds, run.HubCPUSeconds)
	return run
}

// runLine runs a child, decodes its last stdout line into out and returns
// its CPU seconds (user + system).
func runLine(cmd *exec.Cmd, verbose io.Writer, out any) (float64, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if verbose != nil {
		cmd.Stderr = io.MultiWriter(&stderr, verbose)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%w\n%s", err, tail(stderr.Bytes(), 4000))
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], out); err != nil {
		return 0, fmt.Errorf("bad stats line %q: %w\n%s", lines[len(lines)-1], err, tail(stderr.Bytes(), 4000))
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), nil
}

// liveTargets adds the live workloads' targets: p99 on loopback, and
// settee serve at least as good as CouchDB when both ran.
func (r *Results) liveTargets() {
	find := func(workload, hubName string) *LiveRun {
		for _, l := range r.Live {
			if l.Workload == workload && l.Hub == hubName {
				return l
			}
		}
		return nil
	}
	for _, l := range r.Live {
		if l.Workload == "live" {
			r.addTarget("live p99 via "+l.Hub, "<= 150 ms", l.P99Ms, "ms", l.P99Ms <= 150)
		} else {
			r.addTarget("hub p99 via "+l.Hub, "<= 1000 ms", l.P99Ms, "ms", l.P99Ms <= 1000)
		}
	}
	if s, c := find("live", "settee serve"), find("live", "couchdb"); s != nil && c != nil {
		v := ratio(s.P99Ms, c.P99Ms)
		r.addTarget("live p99, settee serve / CouchDB", "<= 1x", v, "x", v <= 1)
	}
	if s, c := find("hub", "settee serve"), find("hub", "couchdb"); s != nil && c != nil {
		v := ratio(s.WritesPerSec, c.WritesPerSec)
		// Both keep to the same schedule: writes/s differ only by when the
		// last delivery lands, hence the 1% allowance.
		r.addTarget("hub writes/s, settee serve / CouchDB", ">= 0.99x", v, "x", v >= 0.99)
		v = ratio(s.P99Ms, c.P99Ms)
		r.addTarget("hub p99, settee serve / CouchDB", "<= 1x", v, "x", v <= 1)
	}
}
