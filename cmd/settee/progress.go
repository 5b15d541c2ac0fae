package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

// outputMode is how a replication reports while it runs.
type outputMode int

const (
	modePlain outputMode = iota // state changes and a final summary, one line each
	modeTTY                     // a single status line redrawn in place, then the summary
	modeJSON                    // one JSON event per line, for scripts
)

// isTerminal reports whether w is a character device (a terminal), without
// a dependency: a stat of the file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress turns replication events into output. Its methods are safe for
// concurrent use: the replicator calls OnEvent from its goroutines.
type progress struct {
	dir   string // names events of a single direction ("pull", "push")
	cont  bool   // continuous: plain mode reports state changes
	tries int    // a one-shot replication's --retries, for its offline line
	mode  outputMode
	w     io.Writer
	start time.Time

	mu       gosync.Mutex
	last     map[string]sync.Event // latest event per direction
	lastDraw time.Time
	drawn    bool // a status line is on screen
	rates    map[string]*rateSample
	offline  map[string]bool // directions reported offline
}

func newProgress(w io.Writer, dir string, continuous, jsonOut bool) *progress {
	p := &progress{dir: dir, cont: continuous, mode: modePlain, w: w, start: time.Now(), last: map[string]sync.Event{}}
	switch {
	case jsonOut:
		p.mode = modeJSON
	case isTerminal(w):
		p.mode = modeTTY
	}
	return p
}

// jsonEvent is the --json form of an event. Errors are scrubbed of
// credentials.
type jsonEvent struct {
	Time            string          `json:"time"`
	Kind            string          `json:"kind"`
	Replication     string          `json:"replication,omitempty"`
	ReplicationID   string          `json:"replication_id,omitempty"`
	State           string          `json:"state,omitempty"`
	DocsRead        int64           `json:"docs_read"`
	DocsWritten     int64           `json:"docs_written"`
	DocWriteFails   int64           `json:"doc_write_failures"`
	MissingChecked  int64           `json:"missing_checked"`
	MissingFound    int64           `json:"missing_found"`
	Pending         *int64          `json:"pending,omitempty"`
	StartSeq        json.RawMessage `json:"start_seq,omitempty"`
	LastSeq         json.RawMessage `json:"last_seq,omitempty"`
	CheckpointedSeq json.RawMessage `json:"checkpointed_seq,omitempty"`
	DocID           string          `json:"doc_id,omitempty"`
	DocRev          string          `json:"doc_rev,omitempty"`
	Error           string          `json:"error,omitempty"`
	ExitCode        *int            `json:"exit_code,omitempty"`
	Seconds         float64         `json:"seconds,omitempty"`
}

// endEvent is the last --json line: the command's outcome and traffic.
type endEvent struct {
	Time      string  `json:"time"`
	Kind      string  `json:"kind"`
	Command   string  `json:"command"`
	ExitCode  int     `json:"exit_code"`
	Error     string  `json:"error,omitempty"`
	Requests  int64   `json:"requests"`
	Retries   int64   `json:"retries"`
	BytesSent int64   `json:"bytes_sent"`
	BytesRecv int64   `json:"bytes_received"`
	Seconds   float64 `json:"seconds"`
}

func statsInto(j *jsonEvent, s sync.Stats) {
	j.DocsRead, j.DocsWritten, j.DocWriteFails = s.DocsRead, s.DocsWritten, s.DocWriteFailures
	j.MissingChecked, j.MissingFound = s.MissingChecked, s.MissingFound
}

// OnEvent is the replicator's event callback.
func (p *progress) OnEvent(ev sync.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Replication == "" {
		ev.Replication = p.dir
	}
	prev, seen := p.last[ev.Replication]
	p.last[ev.Replication] = ev
	wasOffline := p.trackOffline(ev)
	switch p.mode {
	case modeJSON:
		j := jsonEvent{Time: ev.Time.UTC().Format(time.RFC3339Nano), Kind: string(ev.Kind),
			Replication: ev.Replication, ReplicationID: ev.ReplicationID, State: string(ev.State),
			LastSeq: ev.LastSeq, CheckpointedSeq: ev.CheckpointedSeq}
		if ev.Time.IsZero() {
			j.Time = time.Now().UTC().Format(time.RFC3339Nano)
		}
		statsInto(&j, ev.Stats)
		if ev.Pending >= 0 {
			j.Pending = &ev.Pending
		}
		if ev.Err != nil {
			j.Error = oneLine(scrub(ev.Err.Error()))
		}
		if ev.Doc != nil {
			j.DocID, j.DocRev = ev.Doc.ID, ev.Doc.Rev
			if ev.Doc.Err != nil && j.Error == "" {
				j.Error = oneLine(scrub(ev.Doc.Err.Error()))
			}
		}
		_ = writeLine(p.w, j)
	case modePlain:
		if ev.Kind == sync.EventSharedIdentity {
			fmt.Fprintf(p.w, "%swarning: %s\n", dirPrefix(ev.Replication), ev.Err)
		}
		if line, ok := p.stateLine(ev, prev, seen, wasOffline); ok {
			fmt.Fprintln(p.w, line)
		}
	case modeTTY:
		if ev.Kind == sync.EventSharedIdentity {
			p.clearLine()
			fmt.Fprintf(p.w, "%swarning: %s\n", dirPrefix(ev.Replication), ev.Err)
		}
		if ev.Kind == sync.EventDocFailure {
			p.clearLine()
			fmt.Fprintf(p.w, "%sdocument %s %s refused: %s\n", dirPrefix(ev.Replication), ev.Doc.ID, ev.Doc.Rev, oneLine(scrub(fmt.Sprint(ev.Doc.Err))))
		}
		if time.Since(p.lastDraw) < 100*time.Millisecond && ev.Kind == sync.EventProgress {
			return
		}
		p.draw()
	}
}

// stateLine is the plain-mode line of a state change, if it deserves one:
// a continuous replication reports its states, a one-shot one only going
// offline. A replication retrying while offline goes through "starting"
// and "offline" again at each attempt; that is reported once.
func (p *progress) stateLine(ev, prev sync.Event, seen, wasOffline bool) (string, bool) {
	if ev.Kind != sync.EventState || seen && prev.State == ev.State || ev.State == sync.StateStopped {
		return "", false
	}
	switch ev.State {
	case sync.StateOffline:
		if wasOffline {
			return "", false
		}
		reason := unreachableReason(ev.Err)
		if reason == "" && ev.Err != nil {
			reason = oneLine(scrub(ev.Err.Error()))
		}
		next := "retrying until Ctrl-C"
		switch {
		case !p.cont && p.tries <= 0:
			next = "giving up"
		case !p.cont:
			next = fmt.Sprintf("retrying up to %s before giving up", plural(p.tries, "time"))
		}
		return fmt.Sprintf("%soffline (%s); %s", dirPrefix(ev.Replication), reason, next), true
	case sync.StateStarting:
		if wasOffline {
			return "", false
		}
	}
	if !p.cont {
		return "", false
	}
	line := dirPrefix(ev.Replication) + string(ev.State)
	if ev.Err != nil {
		line += ": " + oneLine(scrub(ev.Err.Error()))
	}
	return line, true
}

// trackOffline records whether a direction is offline: from an offline
// state until one other than starting (a new attempt is not a recovery).
// It returns whether it was offline before ev.
func (p *progress) trackOffline(ev sync.Event) bool {
	if p.offline == nil {
		p.offline = map[string]bool{}
	}
	was := p.offline[ev.Replication]
	if ev.Kind == sync.EventState {
		switch ev.State {
		case sync.StateOffline:
			p.offline[ev.Replication] = true
		case sync.StateStarting:
		default:
			p.offline[ev.Replication] = false
		}
	}
	return was
}

func dirPrefix(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + ": "
}

// statusLine renders the current state of every direction.
func (p *progress) statusLine() string {
	dirs := make([]string, 0, len(p.last))
	for d := range p.last {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var parts []string
	for _, d := range dirs {
		ev := p.last[d]
		state := string(ev.State)
		if p.offline[d] {
			state = "offline, retrying"
		}
		s := fmt.Sprintf("%s%s, %d written", dirPrefix(d), state, ev.Stats.DocsWritten)
		if r := p.rate(d, ev.Stats.DocsWritten); r > 0 && ev.State == sync.StateActive {
			s += fmt.Sprintf(", %.0f docs/s", r)
		}
		if ev.Pending > 0 {
			s += fmt.Sprintf(", ~%d pending", ev.Pending)
		}
		if ev.Stats.DocWriteFailures > 0 {
			s += fmt.Sprintf(", %d refused", ev.Stats.DocWriteFailures)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " | ")
}

// rateSample is the start of the window a direction's rate is measured on.
type rateSample struct {
	at      time.Time
	written int64
	rate    float64
}

// rate returns a direction's docs/s over the last second or so, so that it
// stays meaningful when a continuous replication wakes up after idling.
func (p *progress) rate(dir string, written int64) float64 {
	if p.rates == nil {
		p.rates = map[string]*rateSample{}
	}
	now := time.Now()
	r, ok := p.rates[dir]
	if !ok {
		p.rates[dir] = &rateSample{at: now, written: written}
		return 0
	}
	if dt := now.Sub(r.at).Seconds(); dt >= 1 {
		r.rate = float64(written-r.written) / dt
		r.at, r.written = now, written
	}
	return r.rate
}

// lineWidth is the status line's width: $COLUMNS when the shell exports
// it, else 100.
func lineWidth() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		return n - 1
	}
	return 100
}

func (p *progress) draw() {
	line := p.statusLine()
	if w := lineWidth(); len(line) > w {
		line = line[:w]
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
	p.lastDraw = time.Now()
}

func (p *progress) clearLine() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// finish prints the outcome of one direction: a summary line, or the final
// JSON event. err is the replication's error (nil when done).
func (p *progress) finish(dir string, res *sync.Result, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == modeTTY {
		p.clearLine()
	}
	elapsed := time.Since(p.start)
	var stats sync.Stats
	var startSeq, lastSeq json.RawMessage
	var repID string
	if res != nil {
		stats, startSeq, lastSeq, repID = res.Stats, res.StartSeq, res.LastSeq, res.ReplicationID
	}
	if p.mode == modeJSON {
		j := jsonEvent{Time: time.Now().UTC().Format(time.RFC3339Nano), Kind: "done", Replication: dir,
			ReplicationID: repID, State: string(sync.StateStopped), StartSeq: startSeq, LastSeq: lastSeq,
			Seconds: elapsed.Seconds()}
		if err != nil {
			code := exitCode(err)
			j.Kind, j.Error, j.ExitCode = "error", oneLine(scrub(err.Error())), &code
			if code == exitInterrupted {
				j.Kind = "interrupted"
			}
		}
		statsInto(&j, stats)
		_ = writeLine(p.w, j)
		return
	}
	if err != nil && (res == nil || res.Stats.DocsWritten == 0 && exitCode(err) != exitInterrupted) {
		return // the one-line error on stderr says it all
	}
	verb := "done"
	if err != nil || p.cont {
		verb = "stopped"
	}
	line := fmt.Sprintf("%s %s: %s written", dir, verb, plural(stats.DocsWritten, "doc"))
	if stats.DocWriteFailures > 0 {
		line += fmt.Sprintf(" (%d refused)", stats.DocWriteFailures)
	}
	line += fmt.Sprintf(", %d checked, in %s", stats.MissingChecked, elapsed.Round(time.Millisecond))
	if secs := elapsed.Seconds(); secs > 0 && float64(stats.DocsWritten)/secs >= 1 {
		line += fmt.Sprintf(" (%.0f docs/s)", float64(stats.DocsWritten)/secs)
	}
	if len(lastSeq) > 0 {
		line += ", checkpoint at seq " + string(lastSeq)
	}
	fmt.Fprintln(p.w, line)
}

// end prints the command's outcome after every direction finished: in
// JSON mode a last "end" event with the exit code and the traffic of the
// whole command, else a line summing up the traffic.
func (p *progress) end(remote string, wire couch.Stats, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != modeJSON {
		if err == nil || exitCode(err) == exitInterrupted {
			fmt.Fprintf(p.w, "remote %s: %s\n", remote, wireSummary(wire))
		}
		return
	}
	j := endEvent{Time: time.Now().UTC().Format(time.RFC3339Nano), Kind: "end", Command: p.dir,
		ExitCode: exitCode(err), Requests: wire.Requests, Retries: wire.Retries, BytesSent: wire.BytesSent,
		BytesRecv: wire.BytesReceived, Seconds: time.Since(p.start).Seconds()}
	if err != nil {
		j.Error = oneLine(scrub(err.Error()))
	}
	// A Ctrl-C from now on exits with the code this event tells.
	tellExit(j.ExitCode, func() { _ = writeLine(p.w, j) })
}

// wireSummary formats what crossed the wire.
func wireSummary(w couch.Stats) string {
	s := fmt.Sprintf("%s, %s sent, %s received", plural(w.Requests, "request"), humanBytes(w.BytesSent), humanBytes(w.BytesReceived))
	if w.Retries > 0 {
		s += fmt.Sprintf(", %d retried", w.Retries)
	}
	return s
}

// plural counts things: "1 doc", "2 docs".
func plural[N int | int64](n N, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func humanBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
