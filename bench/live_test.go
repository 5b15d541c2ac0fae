package main

import (
	"bytes"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLiveWorkloads runs the live and hub workloads, small, against
// settee serve: every write reaches every other device and the figures
// and targets are filled in.
func TestLiveWorkloads(t *testing.T) {
	h := runHarness(t, 3*time.Minute, "-phases", "live,hub", "-live-writes", "20", "-hub-devices", "3", "-hub-rate", "4", "-hub-seconds", "2",
		"-live-checkpoint-interval", "1s")
	res := h.res
	if res.Pull != nil || res.Dataset.Docs != 0 {
		t.Errorf("live phases alone loaded or pulled the dataset: %+v", res.Dataset)
	}
	want := map[string]struct {
		devices, writes int
		expected        int64
	}{"live": {2, 20, 20}, "hub": {3, 24, 48}}
	if len(res.Live) != 2 {
		t.Fatalf("live runs: %d, want 2 (live and hub via settee serve)", len(res.Live))
	}
	for _, l := range res.Live {
		w, ok := want[l.Workload]
		if !ok || l.Hub != "settee serve" {
			t.Errorf("unexpected run %s via %s", l.Workload, l.Hub)
			continue
		}
		if l.Devices != w.devices || l.Writes != w.writes || l.Expected != w.expected || l.Deliveries != w.expected {
			t.Errorf("%s: devices %d writes %d deliveries %d/%d; want %d, %d, %d/%d", l.Workload, l.Devices, l.Writes, l.Deliveries, l.Expected, w.devices, w.writes, w.expected, w.expected)
		}
		if l.CheckpointSeconds != 1 {
			t.Errorf("%s: checkpoint interval %v s, want 1", l.Workload, l.CheckpointSeconds)
		}
		if !(l.P50Ms > 0 && l.P50Ms <= l.P99Ms && l.P99Ms <= l.MaxMs) || l.WritesPerSec <= 0 || l.Requests <= 0 || l.CPUSeconds <= 0 || l.HubCPUSeconds <= 0 || l.VmHWM <= 0 {
			t.Errorf("%s: implausible figures %+v", l.Workload, l)
		}
	}
	names := map[string]bool{}
	for _, tg := range res.Targets {
		names[tg.Name] = true
	}
	if !names["live p99 via settee serve"] || !names["hub p99 via settee serve"] {
		t.Errorf("targets: %+v", res.Targets)
	}
	if !strings.Contains(h.stdout, "| live (checkpoint every 1s) ") || !strings.Contains(h.stdout, "| hub (checkpoint every 1s) ") {
		t.Errorf("no live table on stdout")
	}
	svg, err := os.ReadFile(h.svg)
	if err != nil || !bytes.Contains(svg, []byte("hub settee serve")) || bytes.Contains(svg, []byte("Throughput")) {
		t.Errorf("chart: want the latency bars only: %v %.300q", err, svg)
	}
}

func TestPct(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 100}, {0.99, 198}, {1, 200}, {0, 1}} {
		if got := pct(d, c.q); got != c.want {
			t.Errorf("pct(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if pct(nil, 0.5) != 0 {
		t.Error("pct of nothing")
	}
}

func TestWriteID(t *testing.T) {
	d, n, ok := parseWriteID(writeID(7, 1234))
	if !ok || d != 7 || n != 1234 {
		t.Errorf("round trip: %d %d %v", d, n, ok)
	}
	for _, id := range []string{"warm-01", "w07", "wx-1", "_design/x"} {
		if _, _, ok := parseWriteID(id); ok {
			t.Errorf("%q parsed as a write", id)
		}
	}
}

// TestBatteryTarget: the pull's client CPU per 100k documents is a target
// row from 10,000 documents on, not for small runs nor big attachments.
func TestBatteryTarget(t *testing.T) {
	for _, c := range []struct {
		docs int
		big  int64
		cpu  float64
		want string // "" (no row), "yes" or "no"
	}{{100000, 0, 2.4, "yes"}, {200000, 0, 6, "no"}, {1000000, 0, 20, "yes"}, {2000, 0, 1, ""}, {1, 1 << 30, 1, ""}} {
		r := &Results{Meta: Meta{Docs: c.docs, BigAttachment: c.big}, Pull: &Direction{Settee: &Measure{CPUSeconds: c.cpu}}}
		r.computeRatios()
		got := ""
		for _, tg := range r.Targets {
			if tg.Name == "pull client CPU s per 100k docs" {
				got = map[bool]string{true: "yes", false: "no"}[tg.Met]
				if want := c.cpu * 100000 / float64(c.docs); tg.Measured != want {
					t.Errorf("%d docs: measured %v, want %v", c.docs, tg.Measured, want)
				}
			}
		}
		if got != c.want {
			t.Errorf("%d docs, %v CPU s: row %q, want %q", c.docs, c.cpu, got, c.want)
		}
	}
}

// TestArrivalRecordedBeforeSeen: the live workload reads the latencies as
// soon as its callback saw the last write arrive, so the arrival must be
// recorded by then.
func TestArrivalRecordedBeforeSeen(t *testing.T) {
	f := &fleet{cnt: &counter{}, writes: make([][]atomic.Int64, 2)}
	for i := range f.writes {
		f.writes[i] = make([]atomic.Int64, 1)
	}
	f.writes[0][0].Store(time.Now().UnixNano())
	recorded := -1
	f.seen = func(obs, writer, n int) {
		f.mu.Lock()
		recorded = len(f.lats)
		f.mu.Unlock()
	}
	f.arrived(1, writeID(0, 0), time.Now())
	if recorded != 1 {
		t.Fatalf("when seen ran, %d latencies were recorded; want 1", recorded)
	}
	f.arrived(0, writeID(0, 0), time.Now()) // the writer's own: not a delivery
	if st := f.stats(time.Time{}, 1, 1); st.Deliveries != 1 {
		t.Errorf("deliveries %d, want 1", st.Deliveries)
	}
}
