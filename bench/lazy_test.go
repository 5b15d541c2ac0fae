package main

import (
	"testing"
	"time"
)

// TestLazyAndPendingPhases runs the lazy and pending phases, small,
// against settee serve: the lazy pull leaves every body behind and
// receives fewer bytes, the bodies fetched on demand arrive, and the
// push's pending count agrees with the target at every checkpoint.
func TestLazyAndPendingPhases(t *testing.T) {
	h := runHarness(t, 3*time.Minute, "-phases", "lazy,pending", "-lazy-docs", "300", "-lazy-atts", "6", "-lazy-att-size", "20KB", "-lazy-fetch", "3",
		"-pending-docs", "2600")
	res := h.res
	if len(res.Lazy) != 1 || len(res.Pending) != 2 || len(res.Errors) > 0 {
		t.Fatalf("lazy runs %d, pending runs %d, errors %q; want 1, 2, none", len(res.Lazy), len(res.Pending), res.Errors)
	}
	l := res.Lazy[0]
	if l.Rounds != 3 {
		t.Errorf("rounds %d, want the default 3", l.Rounds)
	}
	if l.Eager.Downloaded != 6 || l.Lazy.Downloaded != 0 || l.Eager.DocsWritten != 300 || l.Lazy.DocsWritten != 300 {
		t.Errorf("bodies stored eager %d lazy %d, docs %d/%d; want 6, 0, 300", l.Eager.Downloaded, l.Lazy.Downloaded, l.Eager.DocsWritten, l.Lazy.DocsWritten)
	}
	// 6 x 20 KB of random bytes travel as base64 in the eager pull only.
	if l.Eager.BytesReceived-l.Lazy.BytesReceived < 6*20<<10 || !(l.BytesRatio > 0 && l.BytesRatio < 1) {
		t.Errorf("eager received %d bytes, lazy %d (ratio %v)", l.Eager.BytesReceived, l.Lazy.BytesReceived, l.BytesRatio)
	}
	if f := l.Fetch; f == nil || f.N != 3 || f.Requests < 3 || f.BytesReceived < 3*20<<10 {
		t.Errorf("fetch on demand %+v", f)
	}
	p := res.Pending[0]
	if p.Push != "initial" || p.Docs != 2600 || p.FirstPending != 2600 || p.Checked < 2 || p.Mismatches != 0 || p.FinalMissing != 0 || p.ProgressEvents < 5 {
		t.Errorf("pending run %+v", p)
	}
	// 1% of 2600 documents edited, then the push resumes.
	p = res.Pending[1]
	if p.Push != "resumed after 26 edits" || p.Docs != 26 || p.FirstPending != 26 || p.Checked < 1 || p.Mismatches != 0 || p.FinalMissing != 0 {
		t.Errorf("resumed pending run %+v", p)
	}
}
