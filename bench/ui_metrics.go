package main

import (
	"math"
	"runtime/metrics"
)

// runtimeSample is the Go runtime's counters the ui phase compares over a
// pull, to tell a read's tail from CPU starvation (goroutines runnable
// but not running) and from the garbage collector.
type runtimeSample struct {
	sched    *metrics.Float64Histogram
	gcCycles uint64
	gcCPU    float64
	gcPauses *metrics.Float64Histogram
}

var runtimeNames = []string{"/sched/latencies:seconds", "/gc/cycles/total:gc-cycles", "/cpu/classes/gc/total:cpu-seconds", "/sched/pauses/total/gc:seconds"}

func sampleRuntime() runtimeSample {
	s := make([]metrics.Sample, len(runtimeNames))
	for i, n := range runtimeNames {
		s[i].Name = n
	}
	metrics.Read(s)
	var r runtimeSample
	if s[0].Value.Kind() == metrics.KindFloat64Histogram {
		r.sched = s[0].Value.Float64Histogram()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		r.gcCycles = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindFloat64 {
		r.gcCPU = s[2].Value.Float64()
	}
	if s[3].Value.Kind() == metrics.KindFloat64Histogram {
		r.gcPauses = s[3].Value.Float64Histogram()
	}
	return r
}

// runtimeStats are the differences between two samples.
type runtimeStats struct {
	// SchedP99Ms and SchedMaxMs: how long goroutines waited, runnable,
	// for a thread (bucket upper bounds).
	SchedP99Ms  float64 `json:"sched_latency_p99_ms"`
	SchedMaxMs  float64 `json:"sched_latency_max_ms"`
	GCCycles    uint64  `json:"gc_cycles"`
	GCCPUSecs   float64 `json:"gc_cpu_seconds"`
	GCPauseMax  float64 `json:"gc_pause_max_ms"`
	GCPauseP99  float64 `json:"gc_pause_p99_ms"`
	SchedEvents uint64  `json:"sched_events"`
}

func diffRuntime(a, b runtimeSample) runtimeStats {
	st := runtimeStats{GCCycles: b.gcCycles - a.gcCycles, GCCPUSecs: b.gcCPU - a.gcCPU}
	st.SchedP99Ms, st.SchedMaxMs, st.SchedEvents = histDiff(a.sched, b.sched)
	st.GCPauseP99, st.GCPauseMax, _ = histDiff(a.gcPauses, b.gcPauses)
	return st
}

// histDiff returns the p99 and the max (bucket upper bounds, in ms) of the
// events counted between two cumulative histograms, and their number.
func histDiff(a, b *metrics.Float64Histogram) (p99, maxMs float64, n uint64) {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return 0, 0, 0
	}
	counts := make([]uint64, len(b.Counts))
	for i := range counts {
		counts[i] = b.Counts[i] - a.Counts[i]
		n += counts[i]
	}
	if n == 0 {
		return 0, 0, 0
	}
	upper := func(i int) float64 {
		u := b.Buckets[i+1]
		if math.IsInf(u, 1) {
			u = b.Buckets[i]
		}
		return u * 1000
	}
	want := uint64(math.Ceil(0.99 * float64(n)))
	var seen uint64
	for i, c := range counts {
		seen += c
		if p99 == 0 && seen >= want {
			p99 = upper(i)
		}
		if c > 0 {
			maxMs = upper(i)
		}
	}
	return p99, maxMs, n
}
