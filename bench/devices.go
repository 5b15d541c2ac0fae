package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// fleet is a set of simulated devices in one process: each has its own
// local store in continuous two-way sync (sync.NewSync, default options)
// with one hub database, its own HTTP connections, and a follower of its
// store that timestamps every other device's write as it arrives.
//
// Writes are documents "w<device>-<n>"; the time each was written is kept
// in memory (the devices share one clock), so the latency of a delivery
// is the arrival time minus the time just before the writer's Put.
type fleet struct {
	devices []*device
	cnt     *counter
	writes  [][]atomic.Int64 // [device][n]: unix nanos before the Put, 0 before it
	opts    sync.Options     // every device's sync options (Continuous is set)
	// seen is called, when set, for every arrival once it is recorded:
	// the live workload sums up the latencies as soon as it sees the last
	// one (called before, the last could be missing from the sum: "19 of
	// 20 deliveries arrived" in a CI run).
	seen func(obs int, writer, n int)

	mu   gosync.Mutex
	lats []time.Duration // one per (write, other device) delivered
	last time.Time       // latest arrival
	got  int64           // arrivals counted, warm-up excluded
}

// device is one simulated device.
type device struct {
	db   *localdb.DB
	rep  *sync.Replicator
	stop context.CancelFunc
	done chan error // the follower's end
}

// newFleet opens n stores under dir and starts their syncs with hubURL
// (a database URL), with opts (Continuous set; the defaults unless the
// harness says otherwise), and their followers. perDevice bounds each device's
// writes.
func newFleet(ctx context.Context, dir, hubURL string, n, perDevice int, opts sync.Options) (*fleet, error) {
	f := &fleet{cnt: &counter{}, writes: make([][]atomic.Int64, n), opts: opts}
	for i := range f.writes {
		f.writes[i] = make([]atomic.Int64, perDevice)
	}
	for i := 0; i < n; i++ {
		d, err := f.startDevice(ctx, filepath.Join(dir, fmt.Sprintf("device-%02d.db", i)), hubURL, i)
		if err != nil {
			f.close()
			return nil, fmt.Errorf("device %d: %w", i, err)
		}
		f.devices = append(f.devices, d)
	}
	return f, nil
}

func (f *fleet) startDevice(ctx context.Context, path, hubURL string, idx int) (*device, error) {
	_ = os.Remove(path)
	db, err := localdb.Open(path, nil)
	if err != nil {
		return nil, err
	}
	remote, err := couch.New(hubURL, &couch.Options{Transport: f.cnt.transport()})
	if err != nil {
		db.Close()
		return nil, err
	}
	opts := f.opts
	opts.Continuous = true
	rep, err := sync.NewSync(localpeer.New(db), remote, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	dctx, stop := context.WithCancel(ctx)
	d := &device{db: db, rep: rep, stop: stop, done: make(chan error, 1)}
	if err := rep.Start(dctx); err != nil {
		stop()
		db.Close()
		return nil, err
	}
	go func() {
		_, err := db.Follow(dctx, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous}, func(c *localdb.Change) error {
			f.arrived(idx, c.ID, time.Now())
			return nil
		})
		d.done <- err
	}()
	return d, nil
}

// arrived records one document reaching device obs.
func (f *fleet) arrived(obs int, id string, at time.Time) {
	w, n, ok := parseWriteID(id)
	if !ok || w == obs || w >= len(f.writes) || n >= len(f.writes[w]) {
		return // its own write, or the warm-up
	}
	t0 := f.writes[w][n].Load()
	if t0 == 0 {
		return
	}
	f.mu.Lock()
	f.lats = append(f.lats, at.Sub(time.Unix(0, t0)))
	f.got++
	if at.After(f.last) {
		f.last = at
	}
	f.mu.Unlock()
	if f.seen != nil {
		f.seen(obs, w, n)
	}
}

func writeID(device, n int) string { return fmt.Sprintf("w%02d-%06d", device, n) }

func parseWriteID(id string) (device, n int, ok bool) {
	rest, found := strings.CutPrefix(id, "w")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, false
	}
	d, err1 := strconv.Atoi(a)
	m, err2 := strconv.Atoi(b)
	return d, m, err1 == nil && err2 == nil
}

// write stores device's n-th document and notes when it was written.
func (f *fleet) write(ctx context.Context, device, n int) error {
	body := fmt.Sprintf(`{"device":%d,"n":%d,"text":"a small edit made on one device and expected on the others","tags":["bench","live"],"at":%d}`, device, n, time.Now().UnixNano())
	f.writes[device][n].Store(time.Now().UnixNano())
	doc, err := couchdoc.ParseDoc([]byte(body))
	if err != nil {
		return err
	}
	doc.ID = writeID(device, n)
	_, err = f.devices[device].db.Put(ctx, doc)
	return err
}

// warmUp has every device write one document and waits until every
// device has every other's: all syncs are running and caught up.
func (f *fleet) warmUp(ctx context.Context, limit time.Duration) error {
	for i, d := range f.devices {
		doc, err := couchdoc.ParseDoc([]byte(`{"warm":true}`))
		if err != nil {
			return err
		}
		doc.ID = fmt.Sprintf("warm-%02d", i)
		if _, err := d.db.Put(ctx, doc); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(limit)
	for {
		all := true
		for _, d := range f.devices {
			info, err := d.db.Info(ctx)
			if err != nil {
				return err
			}
			all = all && info.DocCount >= int64(len(f.devices))
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("devices not in sync after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitArrivals waits until want arrivals were recorded or limit passes.
func (f *fleet) waitArrivals(ctx context.Context, want int64, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		f.mu.Lock()
		got := f.got
		f.mu.Unlock()
		if got >= want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// close stops every device's sync and follower and closes the stores;
// it returns the first sync error other than the stop itself.
func (f *fleet) close() error {
	var first error
	for _, d := range f.devices {
		d.stop()
		if err := d.rep.Stop(); err != nil && !errors.Is(err, context.Canceled) && first == nil {
			first = err
		}
		<-d.done
		if err := d.db.Close(); err != nil && first == nil {
			first = err
		}
	}
	f.devices = nil
	return first
}
