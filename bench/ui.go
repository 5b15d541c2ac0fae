package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
)

// UIRun is one pull of the ui phase: without reads (the baseline), with
// the app's reads every 5 ms, or with the reads and sync.Options.Throttle.
type UIRun struct {
	Server string `json:"server"`
	Round  int    `json:"round"`
	Mode   string `json:"mode"` // "pull alone", "pull + reads", "throttled pull + reads"
	uiStats
	// ProcessCPUSeconds is the child's whole CPU (index creation and the
	// idle reads included).
	ProcessCPUSeconds float64 `json:"process_cpu_seconds"`
	// DocsPerSecVsAlone is this run's docs/s over the same round's pull
	// alone.
	DocsPerSecVsAlone float64 `json:"docs_per_sec_vs_alone,omitempty"`
}

const (
	uiAlone     = "pull alone"
	uiReads     = "pull + reads"
	uiThrottled = "throttled pull + reads"
)

// uiPhase pulls the loaded dataset into a store with the index
// ["type", "age"], -ui-rounds times in each mode, alternating their order.
func (b *bench) uiPhase(ctx context.Context) error {
	name := serverName(b.cfg)
	modes := []string{uiAlone, uiReads, uiThrottled}
	for round := 1; round <= b.cfg.UIRounds; round++ {
		order := modes
		if round%2 == 0 {
			order = []string{uiThrottled, uiReads, uiAlone}
		}
		var runs []*UIRun
		for _, mode := range order {
			args := []string{"ui", "--remote", b.src, "--local", filepath.Join(b.dir, "ui.db")}
			switch mode {
			case uiReads:
				args = append(args, "--readers")
			case uiThrottled:
				args = append(args, "--readers", "--throttle", fmt.Sprint(b.cfg.UIThrottle))
			}
			if b.cfg.CPUProfileDir != "" {
				args = append(args, "--cpuprofile", filepath.Join(b.cfg.CPUProfileDir, fmt.Sprintf("ui-%d-%s.pprof", round, map[string]string{uiAlone: "alone", uiReads: "reads", uiThrottled: "throttled"}[mode])))
			}
			cmd, err := setteeCmd(ctx, args...)
			if err != nil {
				return err
			}
			b.logf("ui via %s, round %d: %s", name, round, mode)
			run := &UIRun{Server: name, Round: round, Mode: mode}
			cpu, err := runLine(cmd, b.verbose(), &run.uiStats)
			if err != nil {
				b.fail(fmt.Sprintf("ui %s round %d", mode, round), err)
				continue
			}
			run.ProcessCPUSeconds = cpu
			if run.Docs != int64(b.res.Dataset.Leaves) && b.res.Dataset.Leaves > 0 {
				b.fail(fmt.Sprintf("ui %s round %d", mode, round), fmt.Errorf("%d revisions written, want %d", run.Docs, b.res.Dataset.Leaves))
			}
			b.logf("ui via %s, round %d, %s: %.0f docs/s, CPU share %.2f, Find p50 %.1f p99 %.1f max %.1f ms, Get p99 %.1f max %.1f ms (idle Find p99 %.1f, Get p99 %.1f)",
				name, round, mode, run.DocsPerS, run.CPUShare, run.FindP50, run.FindP99, run.FindMax, run.GetP99, run.GetMax, run.IdleFindP99, run.IdleGetP99)
			runs = append(runs, run)
		}
		var alone *UIRun
		for _, r := range runs {
			if r.Mode == uiAlone {
				alone = r
			}
		}
		for _, r := range runs {
			if alone != nil {
				r.DocsPerSecVsAlone = ratio(r.DocsPerS, alone.DocsPerS)
			}
		}
		// In mode order, whatever order they ran in.
		for _, m := range modes {
			for _, r := range runs {
				if r.Mode == m {
					b.res.UI = append(b.res.UI, r)
				}
			}
		}
	}
	return ctx.Err()
}

// serverName names the run's server for the tables.
func serverName(cfg *config) string {
	switch {
	case cfg.Couch != "":
		return "couchdb"
	case cfg.Server == "settee":
		return "settee serve"
	}
	return "pouchdb-server"
}

// writeUITable prints the ui phase, one row per pull.
func writeUITable(w io.Writer, r *Results) {
	if len(r.UI) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| ui: pull from\t round\t mode\t docs/s\t vs alone\t CPU s\t CPU share\t Find p50 ms\t Find p99 ms\t Find max ms\t Get p99 ms\t Get max ms\t idle Find p50/p99/max ms\t idle Get p99/max ms\t")
	fmt.Fprintln(tw, "|---\t---:\t---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---\t---\t")
	for _, u := range r.UI {
		reads := func(f string, v ...any) string {
			if !u.Readers {
				return ""
			}
			return fmt.Sprintf(f, v...)
		}
		fmt.Fprintf(tw, "| %s\t %d\t %s\t %.0f\t %.3f\t %.2f\t %.2f\t %s\t %s\t %s\t %s\t %s\t %s\t %s\t\n",
			u.Server, u.Round, u.Mode, u.DocsPerS, u.DocsPerSecVsAlone, u.CPUSeconds, u.CPUShare,
			reads("%.2f", u.FindP50), reads("%.2f", u.FindP99), reads("%.2f", u.FindMax), reads("%.2f", u.GetP99), reads("%.2f", u.GetMax),
			reads("%.2f / %.2f / %.2f", u.IdleFindP50, u.IdleFindP99, u.IdleFindMax), reads("%.2f / %.2f", u.IdleGetP99, u.IdleGetMax))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// uiTargets: over the unthrottled pulls with reads, the worst round: Find
// p99 <= 16 ms and max <= 33 ms, Get p99 <= 2 ms, docs/s >= 0.95x the same
// round's pull alone.
func (r *Results) uiTargets() {
	var findP99, findMax, getP99, vs float64
	vs = -1
	for _, u := range r.UI {
		if u.Mode != uiReads {
			continue
		}
		findP99, findMax, getP99 = max(findP99, u.FindP99), max(findMax, u.FindMax), max(getP99, u.GetP99)
		if u.DocsPerSecVsAlone > 0 && (vs < 0 || u.DocsPerSecVsAlone < vs) {
			vs = u.DocsPerSecVsAlone
		}
	}
	if vs == -1 && findMax == 0 {
		return
	}
	r.addTarget("ui: Find p99 during a pull", "<= 16 ms", findP99, "ms", findP99 <= 16)
	r.addTarget("ui: Find max during a pull", "<= 33 ms", findMax, "ms", findMax <= 33)
	r.addTarget("ui: Get p99 during a pull", "<= 2 ms", getP99, "ms", getP99 <= 2)
	if vs > 0 {
		r.addTarget("ui: pull docs/s with reads / alone", ">= 0.95x", vs, "x", vs >= 0.95)
	}
}
