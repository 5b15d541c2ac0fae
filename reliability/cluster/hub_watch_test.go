package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	gosync "sync"
	"time"
)

// jobWatch polls the hub's _scheduler/docs entry of each job and keeps
// the states it saw.
type jobWatch struct {
	mu       gosync.Mutex
	states   map[string]map[string]int
	last     map[string]string
	ckpt     map[string]bool
	since    map[string]time.Time // when the job left running; zero while running
	longest  map[string]time.Duration
	errCount map[string]float64
	badSeen  string
	ran      map[string]bool // the job was seen running once
	cancel   context.CancelFunc
	done     chan struct{}
}

// watchJobs polls every 100 ms until stop.
func watchJobs(ctx context.Context, root string, ids []string) *jobWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &jobWatch{states: map[string]map[string]int{}, last: map[string]string{}, ckpt: map[string]bool{},
		since: map[string]time.Time{}, longest: map[string]time.Duration{}, errCount: map[string]float64{}, ran: map[string]bool{},
		cancel: cancel, done: make(chan struct{})}
	for _, id := range ids {
		w.states[id] = map[string]int{}
	}
	go func() {
		defer close(w.done)
		for {
			for _, id := range ids {
				var d struct {
					State      string  `json:"state"`
					ErrorCount float64 `json:"error_count"`
					Info       struct {
						Checkpointed json.RawMessage `json:"checkpointed_source_seq"`
					} `json:"info"`
				}
				st := doJSON(ctx, "GET", root+"/_scheduler/docs/_replicator/"+id, nil, &d)
				if ctx.Err() != nil {
					return
				}
				switch st {
				case http.StatusOK:
				case http.StatusNotFound:
					d.State = "absent"
				default:
					d.State = fmt.Sprintf("status %d", st)
				}
				w.see(id, d.State, d.ErrorCount, len(d.Info.Checkpointed) > 0 && string(d.Info.Checkpointed) != "0" &&
					string(d.Info.Checkpointed) != `"0"` && string(d.Info.Checkpointed) != "null")
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *jobWatch) see(id, state string, errCount float64, checkpointed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.last[id] = state
	w.errCount[id] = max(w.errCount[id], errCount)
	if checkpointed {
		w.ckpt[id] = true
	}
	if state == "absent" && !w.ran[id] {
		return // not yet read by the scheduler
	}
	w.states[id][state]++
	switch state {
	case "running":
		w.ran[id] = true
		if !w.since[id].IsZero() {
			w.longest[id] = max(w.longest[id], now.Sub(w.since[id]))
			w.since[id] = time.Time{}
		}
	default:
		if w.ran[id] && w.since[id].IsZero() {
			w.since[id] = now
		}
	}
	switch state {
	case "failed", "error", "completed", "absent":
		if w.badSeen == "" {
			w.badSeen = fmt.Sprintf("%s %s", id, state)
		}
	}
}

// checkpointed: every job reported a checkpointed sequence.
func (w *jobWatch) checkpointed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.states {
		if !w.ckpt[id] {
			return false
		}
	}
	return true
}

// allRunning: every job's last state seen is running.
func (w *jobWatch) allRunning() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range w.states {
		if w.last[id] != "running" {
			return false
		}
	}
	return true
}

// bad is the first job and state seen that a continuous job must never
// reach; "" when none.
func (w *jobWatch) bad() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.badSeen
}

func (w *jobWatch) stop() {
	w.cancel()
	<-w.done
}

func (w *jobWatch) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("states %v, last %v", w.states, w.last)
}

// figures are the states seen, the longest stretches out of running (in
// ms, a stretch still open counting until now) and the error counts.
func (w *jobWatch) figures() (map[string]map[string]int, map[string]int64, map[string]float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ms := map[string]int64{}
	for id := range w.states {
		l := w.longest[id]
		if !w.since[id].IsZero() {
			l = max(l, time.Since(w.since[id]))
		}
		ms[id] = l.Milliseconds()
	}
	return w.states, ms, w.errCount
}
