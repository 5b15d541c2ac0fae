package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/settee/settee/sync"
)

// liveStats is what a live or hub child prints as its last stdout line.
type liveStats struct {
	Devices int `json:"devices"`
	// Writes made during the measure, and Deliveries expected (each write
	// to every other device) and recorded.
	Writes     int   `json:"writes"`
	Expected   int64 `json:"deliveries_expected"`
	Deliveries int64 `json:"deliveries"`
	// Seconds runs from the first measured write to the last arrival;
	// WritesPerSec is Writes over it (hub: the rate the hub sustained).
	Seconds      float64 `json:"seconds"`
	WritesPerSec float64 `json:"writes_per_sec"`
	// Latencies of the deliveries, in milliseconds.
	P50Ms float64 `json:"p50_ms"`
	P90Ms float64 `json:"p90_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
	// Requests and socket bytes of all the devices' HTTP clients, warm-up
	// included.
	Requests      int64 `json:"requests"`
	BytesSent     int64 `json:"bytes_sent"`
	BytesReceived int64 `json:"bytes_received"`
	VmHWM         int64 `json:"vm_hwm_bytes"`
}

// runLiveChild runs one of the two live workloads against a hub database:
//
//	live --hub URL --dir DIR --writes N
//	    two devices, A and B; A writes N documents one after the other,
//	    each once B has the previous one.
//	hub --hub URL --dir DIR --devices D --rate R --seconds T
//	    D devices each write R documents a second for T seconds.
func runLiveChild(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("child "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	hub := fs.String("hub", "", "hub database URL")
	dir := fs.String("dir", "", "directory for the devices' stores")
	writes := fs.Int("writes", 1000, "live: writes by device A")
	devices := fs.Int("devices", 20, "hub: devices")
	rate := fs.Float64("rate", 5, "hub: writes per second per device")
	seconds := fs.Float64("seconds", 20, "hub: how long the devices write")
	ckpt := fs.Duration("checkpoint-interval", 0, "the devices' sync.Options.CheckpointInterval (0: the default)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the devices (warm-up included) here")
	timeout := fs.Duration("wait", 30*time.Second, "how long to wait for a delivery (live: each; hub: the last)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *hub == "" || *dir == "" {
		return errors.New("child: --hub and --dir are required")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	stop, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	var st *liveStats
	if mode == "live" {
		if *writes < 1 {
			return errors.New("child live: --writes must be positive")
		}
		st, err = measureLive(ctx, *hub, *dir, *writes, *timeout, sync.Options{CheckpointInterval: *ckpt})
	} else {
		perDevice := int(*rate**seconds + 0.5)
		if *devices < 2 || perDevice < 1 {
			return errors.New("child hub: want at least 2 devices and 1 write each")
		}
		st, err = measureHub(ctx, *hub, *dir, *devices, *rate, perDevice, *timeout, sync.Options{CheckpointInterval: *ckpt})
	}
	if err != nil {
		return err
	}
	st.VmHWM = procStatusBytes(os.Getpid(), "VmHWM:")
	return writeStatsLine(stdout, st)
}

// measureLive: device 0 writes, device 1 is watched.
func measureLive(ctx context.Context, hub, dir string, writes int, wait time.Duration, opts sync.Options) (*liveStats, error) {
	f, err := newFleet(ctx, dir, hub, 2, writes, opts)
	if err != nil {
		return nil, err
	}
	defer f.close()
	if err := f.warmUp(ctx, 60*time.Second); err != nil {
		return nil, err
	}
	arrived := make(chan int, writes)
	f.seen = func(obs, writer, n int) {
		if obs == 1 {
			arrived <- n
		}
	}
	start := time.Now()
	for n := 0; n < writes; n++ {
		if err := f.write(ctx, 0, n); err != nil {
			return nil, fmt.Errorf("write %d: %w", n, err)
		}
		timer := time.NewTimer(wait)
	wait:
		for {
			select {
			case got := <-arrived:
				if got == n {
					break wait
				}
			case <-timer.C:
				return nil, fmt.Errorf("write %d: not on device B after %s", n, wait)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		timer.Stop()
	}
	st := f.stats(start, writes, int64(writes))
	return st, f.close()
}

// measureHub: every device writes at a steady rate, all are watched.
func measureHub(ctx context.Context, hub, dir string, devices int, rate float64, perDevice int, wait time.Duration, opts sync.Options) (*liveStats, error) {
	f, err := newFleet(ctx, dir, hub, devices, perDevice, opts)
	if err != nil {
		return nil, err
	}
	defer f.close()
	if err := f.warmUp(ctx, 120*time.Second); err != nil {
		return nil, err
	}
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	errs := make(chan error, devices)
	for d := 0; d < devices; d++ {
		go func() {
			// Devices start spread over one interval, then keep to a
			// schedule: a late write does not push the next ones back.
			first := start.Add(interval * time.Duration(d) / time.Duration(devices))
			for n := 0; n < perDevice; n++ {
				if delay := time.Until(first.Add(interval * time.Duration(n))); delay > 0 {
					select {
					case <-time.After(delay):
					case <-ctx.Done():
						errs <- ctx.Err()
						return
					}
				}
				if err := f.write(ctx, d, n); err != nil {
					errs <- fmt.Errorf("device %d write %d: %w", d, n, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for d := 0; d < devices; d++ {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	writes := devices * perDevice
	expected := int64(writes) * int64(devices-1)
	f.waitArrivals(ctx, expected, wait)
	st := f.stats(start, writes, expected)
	return st, f.close()
}

// stats sums up the arrivals since start.
func (f *fleet) stats(start time.Time, writes int, expected int64) *liveStats {
	f.mu.Lock()
	lats := slices.Clone(f.lats)
	last := f.last
	f.mu.Unlock()
	slices.Sort(lats)
	st := &liveStats{
		Devices: len(f.devices), Writes: writes, Expected: expected, Deliveries: int64(len(lats)),
		P50Ms: pct(lats, 0.50), P90Ms: pct(lats, 0.90), P99Ms: pct(lats, 0.99), MaxMs: pct(lats, 1),
		Requests: f.cnt.requests.Load(), BytesSent: f.cnt.sent.Load(), BytesReceived: f.cnt.recv.Load(),
	}
	if last.After(start) {
		st.Seconds = last.Sub(start).Seconds()
		st.WritesPerSec = float64(writes) / st.Seconds
	}
	return st
}

// pct is the q-quantile (nearest rank) of sorted durations, in ms.
func pct(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}
