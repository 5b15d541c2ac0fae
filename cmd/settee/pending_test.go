package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/server/servertest"
)

// pendingOf returns the pending counts of the events of one direction
// after its start, failing on an event without one.
func pendingOf(t *testing.T, evs []map[string]any, dir string) []float64 {
	t.Helper()
	var out []float64
	for _, ev := range evs {
		if ev["replication"] != dir || ev["state"] == "starting" || ev["kind"] == "done" {
			continue
		}
		p, ok := ev["pending"].(float64)
		if !ok {
			t.Fatalf("%s event without a pending count: %v", dir, ev)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Fatalf("no %s event", dir)
	}
	return out
}

// TestSyncJSONPending: `settee sync --json` events carry the pending
// counts of both directions, exact for the push also when it resumes from
// a checkpoint (20 new local changes after a first sync).
func TestSyncJSONPending(t *testing.T) {
	u := servertest.Start(t, nil).CreateDB(t, "hub")
	a := filepath.Join(t.TempDir(), "a.db")
	var docs []string
	for i := range 120 {
		docs = append(docs, fmt.Sprintf(`{"_id":"d%03d"}`, i))
	}
	for _, d := range docs[:60] {
		ok(t, "put", a, d)
	}
	evs := events(t, ok(t, "sync", "--json", a, u))
	push := pendingOf(t, evs, "push")
	pull := pendingOf(t, evs, "pull")
	if push[0] != 60 || push[len(push)-1] != 0 || pull[len(pull)-1] != 0 {
		t.Fatalf("first sync: push pending %v, pull pending %v", push, pull)
	}
	for _, d := range docs[60:80] {
		ok(t, "put", a, d)
	}
	evs = events(t, ok(t, "sync", "--json", a, u))
	push = pendingOf(t, evs, "push")
	if push[0] != 20 || push[len(push)-1] != 0 {
		t.Fatalf("resumed sync: push pending %v", push)
	}
	if out := ok(t, "pending", a, u); out != "" {
		t.Fatalf("pending after the sync: %q", out)
	}
	ok(t, "put", a, `{"_id":"late"}`)
	ok(t, "put", a, `{"_id":"d000"}`, "--update")
	if out := ok(t, "pending", a, u); strings.Fields(out)[0] != "d000" || strings.Fields(out)[1] != "late" {
		t.Fatalf("pending: %q", out)
	}
}
