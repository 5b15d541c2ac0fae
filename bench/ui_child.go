package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"slices"
	"syscall"
	"time"

	"github.com/settee/settee/internal/memlimit"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// uiIndex and uiQuery are what the app's screen reads: the query
// on the index ["type", "age"]. The generated data has no "user" type;
// "contact" is one of its six types, the same share of the documents.
const (
	uiIndex = `{"index": {"fields": ["type", "age"]}, "ddoc": "ui-type-age", "name": "type-age", "type": "json"}`
	uiQuery = `{"selector": {"type": "contact", "age": {"$gt": 30}}, "sort": [{"type": "asc"}, {"age": "asc"}], "limit": 20}`
)

// uiStats is what a ui child prints as its last stdout line.
type uiStats struct {
	Readers  bool    `json:"readers"`
	Throttle int     `json:"throttle_docs_per_sec,omitempty"`
	Docs     int64   `json:"docs"`
	Seconds  float64 `json:"seconds"`
	DocsPerS float64 `json:"docs_per_sec"`
	// CPUSeconds is the process's CPU during the pull (readers included);
	// CPUShare the same over the pull's wall time (cores).
	CPUSeconds float64 `json:"cpu_seconds"`
	CPUShare   float64 `json:"cpu_share"`
	// During the pull: Finds and Gets timed, their latencies in ms.
	Finds    int     `json:"finds,omitempty"`
	FindP50  float64 `json:"find_p50_ms,omitempty"`
	FindP99  float64 `json:"find_p99_ms,omitempty"`
	FindMax  float64 `json:"find_max_ms,omitempty"`
	Gets     int     `json:"gets,omitempty"`
	GetP50   float64 `json:"get_p50_ms,omitempty"`
	GetP99   float64 `json:"get_p99_ms,omitempty"`
	GetMax   float64 `json:"get_max_ms,omitempty"`
	FindRows int     `json:"find_rows_last,omitempty"`
	// The same reads on the full store once the pull is over, nothing
	// else running: the idle baseline.
	IdleFinds   int     `json:"idle_finds,omitempty"`
	IdleFindP50 float64 `json:"idle_find_p50_ms,omitempty"`
	IdleFindP99 float64 `json:"idle_find_p99_ms,omitempty"`
	IdleFindMax float64 `json:"idle_find_max_ms,omitempty"`
	IdleGetP99  float64 `json:"idle_get_p99_ms,omitempty"`
	IdleGetMax  float64 `json:"idle_get_max_ms,omitempty"`
	VmHWM       int64   `json:"vm_hwm_bytes"`
	// Runtime is the Go runtime's scheduling latency and collector over
	// the pull.
	Runtime runtimeStats `json:"runtime"`
}

// runUIChild pulls the remote database into a new store with a Mango
// index, as an app would, and with --readers runs the app's screen
// meanwhile: every --interval a Find and a Get, one after the other, timed.
//
//	ui --remote URL --local PATH [--readers] [--interval 5ms] [--throttle N]
//	   [--idle-seconds 5] [--cpuprofile FILE] [--trace FILE]
func runUIChild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("child ui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	remote := fs.String("remote", "", "remote database URL")
	local := fs.String("local", "", "local store path (created)")
	readers := fs.Bool("readers", false, "run the reads during the pull")
	interval := fs.Duration("interval", 5*time.Millisecond, "time between two rounds of reads")
	throttle := fs.Int("throttle", 0, "sync.Options.Throttle (documents a second; 0: none)")
	idleSecs := fs.Float64("idle-seconds", 5, "with --readers: how long the reads run on the full store after the pull")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the pull here")
	traceFile := fs.String("trace", "", "write an execution trace of the pull here")
	bulk := fs.Int("bulk-docs-size", 0, "sync.Options.BulkDocsSize (0: the default)")
	readConns := fs.Int("read-conns", 0, "localdb.Options.ReadConns (0: the default)")
	memLimit := fs.Bool("memlimit", false, "apply settee pull's soft memory limit (an app's process has none by default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *remote == "" || *local == "" {
		return errors.New("child ui: --remote and --local are required")
	}
	if *memLimit {
		memlimit.Apply()
	}
	_ = os.Remove(*local)
	db, err := localdb.Open(*local, &localdb.Options{ReadConns: *readConns})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := query.CreateIndex(ctx, db, []byte(uiIndex)); err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	rp, err := couch.New(*remote, nil)
	if err != nil {
		return err
	}
	opts := sync.Options{Source: rp, Target: localpeer.New(db), Throttle: *throttle, BulkDocsSize: *bulk}
	stopProf, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			return err
		}
		if err := trace.Start(f); err != nil {
			return err
		}
		defer f.Close()
	}
	st := uiStats{Readers: *readers, Throttle: *throttle}
	rctx, stopReads := context.WithCancel(ctx)
	readsDone := make(chan *reads, 1)
	if *readers {
		go func() { readsDone <- readLoop(rctx, db, *interval) }()
	}
	cpu0, rt0 := selfCPU(), sampleRuntime()
	start := time.Now()
	res, err := sync.Replicate(ctx, opts)
	st.Seconds = time.Since(start).Seconds()
	st.CPUSeconds = selfCPU() - cpu0
	st.Runtime = diffRuntime(rt0, sampleRuntime())
	stopReads()
	if *traceFile != "" {
		trace.Stop()
	}
	stopProf()
	if err != nil {
		return fmt.Errorf("replicate: %w", err)
	}
	st.Docs = res.Stats.DocsWritten
	st.DocsPerS = float64(st.Docs) / st.Seconds
	st.CPUShare = st.CPUSeconds / st.Seconds
	if *readers {
		r := <-readsDone
		if r.err != nil {
			return r.err
		}
		st.Finds, st.Gets, st.FindRows = len(r.find), len(r.get), r.rows
		st.FindP50, st.FindP99, st.FindMax = pct(r.find, 0.5), pct(r.find, 0.99), pct(r.find, 1)
		st.GetP50, st.GetP99, st.GetMax = pct(r.get, 0.5), pct(r.get, 0.99), pct(r.get, 1)
		ictx, cancel := context.WithTimeout(ctx, time.Duration(*idleSecs*float64(time.Second)))
		idle := readLoop(ictx, db, *interval)
		cancel()
		if idle.err != nil {
			return idle.err
		}
		st.IdleFinds = len(idle.find)
		st.IdleFindP50, st.IdleFindP99, st.IdleFindMax = pct(idle.find, 0.5), pct(idle.find, 0.99), pct(idle.find, 1)
		st.IdleGetP99, st.IdleGetMax = pct(idle.get, 0.99), pct(idle.get, 1)
	}
	if err := db.Close(); err != nil {
		return err
	}
	st.VmHWM = procStatusBytes(os.Getpid(), "VmHWM:")
	return writeStatsLine(stdout, st)
}

// reads are the latencies of a read loop, sorted.
type reads struct {
	find, get []time.Duration
	rows      int // rows of the last Find
	err       error
}

// readLoop runs, every interval until ctx is done, the app's Find and
// then a Get of the first document it found (a fixed id until it finds
// one). A round that overruns the interval delays the next, as on a UI
// thread.
func readLoop(ctx context.Context, db *localdb.DB, interval time.Duration) *reads {
	r := &reads{}
	t := time.NewTicker(interval)
	defer t.Stop()
	id := "missing-until-found"
	for {
		select {
		case <-ctx.Done():
			slices.Sort(r.find)
			slices.Sort(r.get)
			return r
		case <-t.C:
		}
		t0 := time.Now()
		res, err := query.Find(context.WithoutCancel(ctx), db, []byte(uiQuery))
		if err != nil {
			r.err = fmt.Errorf("find: %w", err)
			return r
		}
		r.find = append(r.find, time.Since(t0))
		r.rows = len(res.Docs)
		if len(res.Docs) > 0 {
			var d struct {
				ID string `json:"_id"`
			}
			if json.Unmarshal(res.Docs[0], &d) == nil && d.ID != "" {
				id = d.ID
			}
		}
		t0 = time.Now()
		if _, err := db.Get(context.WithoutCancel(ctx), id, localdb.GetOptions{}); err != nil && id != "missing-until-found" {
			r.err = fmt.Errorf("get %s: %w", id, err)
			return r
		}
		r.get = append(r.get, time.Since(t0))
	}
}

// selfCPU is this process's user+system CPU seconds so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
