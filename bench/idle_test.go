package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestIdlePhase runs the idle phase for two seconds: our CLI and PouchDB
// in continuous two-way sync with idle databases on settee serve and
// pouchdb-server, each client measured, each settee client still live
// after the window, and the table, targets and chart filled in.
func TestIdlePhase(t *testing.T) {
	h := runHarness(t, 5*time.Minute, "-phases", "idle", "-idle-seconds", "2")
	res := h.res
	got := map[string]bool{}
	for _, l := range res.Idle {
		got[l.Server+"/"+l.Client] = true
		if l.Seconds < 2 || l.CPUPerMinute < 0 || l.RSS <= 0 || l.Wakeups < 0 {
			t.Errorf("%s via %s: implausible figures %+v", l.Client, l.Server, l)
		}
	}
	for _, k := range []string{"settee serve/settee", "settee serve/pouchdb", "pouchdb-server/settee", "pouchdb-server/pouchdb"} {
		if !got[k] {
			t.Errorf("no idle run %s; have %v", k, got)
		}
	}
	live := 0
	for _, c := range res.Checks {
		if strings.Contains(c, "pulled a new document after the window") {
			live++
		}
	}
	if live != 2 {
		t.Errorf("settee clients checked live after the window: %d, want 2: %q", live, res.Checks)
	}
	names := map[string]bool{}
	for _, tg := range res.Targets {
		names[tg.Name] = true
	}
	if !names["idle CPU via settee serve"] || !names["idle CPU, settee / PouchDB via pouchdb-server"] {
		t.Errorf("targets: %+v", res.Targets)
	}
	if !strings.Contains(h.stdout, "| idle sync via") {
		t.Errorf("no idle table on stdout")
	}
	svg, err := os.ReadFile(h.svg)
	if err != nil || !bytes.Contains(svg, []byte("pouchdb via settee serve")) {
		t.Errorf("chart: want the idle bars: %v %.300q", err, svg)
	}
}
