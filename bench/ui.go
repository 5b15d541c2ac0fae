package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"text/tabwriter"
)

// UIRun is one pull of the ui phase: without reads (the baseline), with
// the app's reads every 5 ms, or with the reads and sync.Options.Throttle.
type UIRun struct {
	Server string `json:"server"`
	// Contender is "settee" (this binary's ui child) or "pouchdb" (PouchDB
	// 9, bench/ui.js); results from before PouchDB ran here have none.
	Contender string `json:"contender,omitempty"`
	Round     int    `json:"round"`
	Mode      string `json:"mode"` // "pull alone", "pull + reads", "throttled pull + reads"
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
// ["type", "age"], -ui-rounds times in each mode, alternating their order:
// Settee's three pulls and PouchDB's two (it has no throttle), each
// contender when -contenders names it.
func (b *bench) uiPhase(ctx context.Context) error {
	var order []uiPull
	if b.cfg.Contenders["settee"] {
		for _, m := range []string{uiAlone, uiReads, uiThrottled} {
			order = append(order, uiPull{uiSettee, m})
		}
	}
	if b.cfg.Contenders["pouchdb"] {
		order = append(order, uiPull{uiPouchDB, uiAlone}, uiPull{uiPouchDB, uiReads})
	}
	for round := 1; round <= b.cfg.UIRounds; round++ {
		pulls := slices.Clone(order)
		if round%2 == 0 {
			slices.Reverse(pulls)
		}
		var runs []*UIRun
		for _, p := range pulls {
			if run := b.uiRun(ctx, round, p); run != nil {
				runs = append(runs, run)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// In contender and mode order, whatever order they ran in, each
		// against its own pull alone.
		for _, p := range order {
			for _, r := range runs {
				if r.Contender != p.contender || r.Mode != p.mode {
					continue
				}
				for _, a := range runs {
					if a.Contender == r.Contender && a.Mode == uiAlone {
						r.DocsPerSecVsAlone = ratio(r.DocsPerS, a.DocsPerS)
					}
				}
				b.res.UI = append(b.res.UI, r)
			}
		}
	}
	return ctx.Err()
}

// The ui phase's contenders, as results.json names them.
const (
	uiSettee  = "settee"
	uiPouchDB = "pouchdb"
)

// uiPull is one pull of a round: whose, in which mode.
type uiPull struct{ contender, mode string }

// uiRun runs one pull in its child (this binary's ui, or bench/ui.js for
// PouchDB) and checks it wrote every revision of the dataset; nil when it
// failed (recorded).
func (b *bench) uiRun(ctx context.Context, round int, p uiPull) *UIRun {
	name := serverName(b.cfg)
	what := fmt.Sprintf("ui %s %s round %d", p.contender, p.mode, round)
	var cmd *exec.Cmd
	if p.contender == uiPouchDB {
		args := []string{"--remote", b.src, "--local", filepath.Join(b.dir, "ui-pouchdb"), "--adapter", b.cfg.PouchAdapter,
			"--idle-seconds", fmt.Sprint(b.cfg.UIIdleSeconds)}
		if p.mode == uiReads {
			args = append(args, "--readers")
		}
		cmd = nodeCmd(ctx, b.cfg.Root, "ui.js", args...)
	} else {
		args := []string{"ui", "--remote", b.src, "--local", filepath.Join(b.dir, "ui.db"), "--idle-seconds", fmt.Sprint(b.cfg.UIIdleSeconds)}
		switch p.mode {
		case uiReads:
			args = append(args, "--readers")
		case uiThrottled:
			args = append(args, "--readers", "--throttle", fmt.Sprint(b.cfg.UIThrottle))
		}
		if b.cfg.CPUProfileDir != "" {
			args = append(args, "--cpuprofile", filepath.Join(b.cfg.CPUProfileDir, fmt.Sprintf("ui-%d-%s.pprof", round, map[string]string{uiAlone: "alone", uiReads: "reads", uiThrottled: "throttled"}[p.mode])))
		}
		var err error
		if cmd, err = setteeCmd(ctx, args...); err != nil {
			b.fail(what, err)
			return nil
		}
	}
	b.logf("ui via %s, round %d: %s %s", name, round, p.contender, p.mode)
	run := &UIRun{Server: name, Contender: p.contender, Round: round, Mode: p.mode}
	cpu, err := runLine(cmd, b.verbose(), &run.uiStats)
	if err != nil {
		b.fail(what, err)
		return nil
	}
	run.ProcessCPUSeconds = cpu
	if run.Docs != int64(b.res.Dataset.Leaves) && b.res.Dataset.Leaves > 0 {
		b.fail(what, fmt.Errorf("%d revisions written, want %d", run.Docs, b.res.Dataset.Leaves))
	}
	b.logf("ui via %s, round %d, %s %s: %.0f docs/s, CPU share %.2f, Find p50 %.1f p99 %.1f max %.1f ms, Get p99 %.1f max %.1f ms (idle Find p99 %.1f, Get p99 %.1f)",
		name, round, p.contender, p.mode, run.DocsPerS, run.CPUShare, run.FindP50, run.FindP99, run.FindMax, run.GetP99, run.GetMax, run.IdleFindP99, run.IdleGetP99)
	return run
}

// client names a run's contender in the table (results written before
// PouchDB ran in this phase have none: Settee's).
func (u *UIRun) client() string {
	if u.Contender == uiPouchDB {
		return "PouchDB 9"
	}
	return "Settee"
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
	fmt.Fprintln(tw, "| ui: pull from\t client\t round\t mode\t docs/s\t vs alone\t CPU s\t CPU share\t Find p50 ms\t Find p99 ms\t Find max ms\t Get p99 ms\t Get max ms\t idle Find p50/p99/max ms\t idle Get p99/max ms\t")
	fmt.Fprintln(tw, "|---\t---\t---:\t---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---\t---\t")
	for _, u := range r.UI {
		reads := func(f string, v ...any) string {
			if !u.Readers {
				return ""
			}
			return fmt.Sprintf(f, v...)
		}
		fmt.Fprintf(tw, "| %s\t %s\t %d\t %s\t %.0f\t %.3f\t %.2f\t %.2f\t %s\t %s\t %s\t %s\t %s\t %s\t %s\t\n",
			u.Server, u.client(), u.Round, u.Mode, u.DocsPerS, u.DocsPerSecVsAlone, u.CPUSeconds, u.CPUShare,
			reads("%.2f", u.FindP50), reads("%.2f", u.FindP99), reads("%.2f", u.FindMax), reads("%.2f", u.GetP99), reads("%.2f", u.GetMax),
			reads("%.2f / %.2f / %.2f", u.IdleFindP50, u.IdleFindP99, u.IdleFindMax), reads("%.2f / %.2f", u.IdleGetP99, u.IdleGetMax))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// uiTargets: over Settee's unthrottled pulls with reads, the worst round:
// Find p99 <= 16 ms and max <= 33 ms, Get p99 <= 2 ms, docs/s >= 0.95x the
// same round's pull alone. PouchDB's rows are beside them, not targets.
func (r *Results) uiTargets() {
	var findP99, findMax, getP99, vs float64
	vs = -1
	for _, u := range r.UI {
		if u.Mode != uiReads || u.Contender == uiPouchDB {
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
