package main

import (
	"strings"
	"testing"
	"time"
)

// TestUIPhase runs the ui phase on a tiny dataset against a pouchdb-server
// it starts, both contenders: Settee's three pulls and PouchDB 9's two,
// each writing every revision of the dataset, the pulls with reads timing
// finds and gets during the pull and idle, and the table naming both.
func TestUIPhase(t *testing.T) {
	h := runHarness(t, 2*time.Minute, "-docs", "200", "-seed", "3", "-phases", "ui",
		"-contenders", "settee,pouchdb", "-ui-rounds", "1", "-ui-idle-seconds", "0.3", "-ui-throttle", "100000")
	res := h.res
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %q", res.Errors)
	}
	got := map[string]*UIRun{}
	for _, u := range res.UI {
		got[u.Contender+"/"+u.Mode] = u
	}
	want := []string{"settee/" + uiAlone, "settee/" + uiReads, "settee/" + uiThrottled, "pouchdb/" + uiAlone, "pouchdb/" + uiReads}
	if len(res.UI) != len(want) {
		t.Errorf("%d ui rows, want %d: %v", len(res.UI), len(want), got)
	}
	for _, k := range want {
		u := got[k]
		if u == nil {
			t.Errorf("no ui row %s", k)
			continue
		}
		if u.Docs != int64(res.Dataset.Leaves) || u.Docs == 0 {
			t.Errorf("%s: %d revisions written, want the dataset's %d", k, u.Docs, res.Dataset.Leaves)
		}
		if u.Seconds <= 0 || u.DocsPerS <= 0 || u.CPUSeconds <= 0 || u.ProcessCPUSeconds <= 0 || u.VmHWM <= 0 || u.DocsPerSecVsAlone <= 0 {
			t.Errorf("%s: implausible figures %+v", k, u)
		}
		if u.Readers != (u.Mode != uiAlone) {
			t.Errorf("%s: readers %v", k, u.Readers)
		}
		if u.Readers && (u.Finds == 0 || u.FindP50 <= 0 || u.FindMax < u.FindP99 || u.Gets != u.Finds || u.IdleFinds == 0 || u.IdleFindP50 <= 0 || u.IdleGetMax <= 0) {
			t.Errorf("%s: reads not timed: %+v", k, u.uiStats)
		}
	}
	if !strings.Contains(h.stdout, "| PouchDB 9") || !strings.Contains(h.stdout, "| Settee") {
		t.Errorf("ui table without both contenders:\n%s", h.stdout)
	}
}

// TestUITargetsSettee: the ui targets judge Settee's pulls with reads
// only, PouchDB's slower reads beside them do not count.
func TestUITargetsSettee(t *testing.T) {
	r := &Results{UI: []*UIRun{
		{Contender: uiSettee, Mode: uiReads, DocsPerSecVsAlone: 1, uiStats: uiStats{Readers: true, FindP99: 3, FindMax: 5, GetP99: 1}},
		{Contender: uiPouchDB, Mode: uiReads, DocsPerSecVsAlone: 0.5, uiStats: uiStats{Readers: true, FindP99: 900, FindMax: 2000, GetP99: 40}},
	}}
	r.uiTargets()
	if len(r.Targets) != 4 {
		t.Fatalf("targets %+v, want 4", r.Targets)
	}
	for _, tg := range r.Targets {
		if !tg.Met {
			t.Errorf("target %s measured %v from PouchDB's row", tg.Name, tg.Measured)
		}
	}
}
