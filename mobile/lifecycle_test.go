package mobile

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenCopyPurgeStatsCompact(t *testing.T) {
	seed := openTest(t)
	rev, err := seed.Put(`{"_id":"a","v":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Put(`{"_id":"b"}`); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "device.db")
	for i := 0; i < 2; i++ { // the second call opens what the first made
		c, err := OpenCopy(seed.Path(), path)
		if err != nil {
			t.Fatal(err)
		}
		info := mustJSON(t, must(c.Info()))
		if info["uuid"] == mustJSON(t, must(seed.Info()))["uuid"] || info["doc_count"].(float64) < 2 {
			t.Errorf("copy %d info %v", i, info)
		}
		if i == 0 {
			if _, err := c.Put(`{"_id":"mine"}`); err != nil {
				t.Fatal(err)
			}
		} else if _, err := c.Get("mine"); err != nil {
			t.Errorf("the second OpenCopy replaced the copy: %v", err)
		}
		if err := c.db.CheckInvariants(context.Background()); err != nil {
			t.Error(err)
		}
		c.Close()
	}
	// Once made, the copy opens even without the seed.
	c, err := OpenCopy(filepath.Join(t.TempDir(), "gone.db"), path)
	if err != nil {
		t.Fatalf("OpenCopy of an existing copy without its seed: %v", err)
	}
	c.Close()
	if _, err := OpenCopy(filepath.Join(t.TempDir(), "none.db"), filepath.Join(t.TempDir(), "x.db")); err == nil {
		t.Error("OpenCopy of a missing seed succeeded")
	}

	res := mustJSON(t, must(seed.Purge(`{"a":["`+rev+`"]}`)))
	if revs, _ := res["a"].([]any); len(revs) != 1 || revs[0] != rev {
		t.Fatalf("purge = %v", res)
	}
	if _, err := seed.Purge(`["a"]`); err == nil {
		t.Error("a malformed purge request was accepted")
	}
	st := mustJSON(t, must(seed.Stats()))
	if st["docs"] != 1.0 || st["file"].(float64) <= 0 {
		t.Errorf("stats %v", st)
	}
	if err := seed.Compact(); err != nil {
		t.Fatal(err)
	}
	if ran, err := seed.CompactIfNeeded(0, 0); err != nil || ran {
		t.Errorf("CompactIfNeeded right after Compact: %v %v", ran, err)
	}
}

func TestExpiration(t *testing.T) {
	d := openTest(t)
	if _, err := d.Put(`{"_id":"tmp"}`); err != nil {
		t.Fatal(err)
	}
	if err := d.SetExpiration("nope", 1); err == nil {
		t.Error("expiration of a missing doc accepted")
	}
	at := time.Now().Add(time.Hour).UnixMilli()
	if err := d.SetExpiration("tmp", at); err != nil {
		t.Fatal(err)
	}
	if got := must(d.Expiration("tmp")); got != at {
		t.Errorf("expiration %d, want %d", got, at)
	}
	if err := d.SetExpiration("tmp", time.Now().UnixMilli()-1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := d.Get("tmp"); err != nil && strings.HasPrefix(err.Error(), "not_found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the expired doc was never purged")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := must(d.Expiration("tmp")); got != 0 {
		t.Errorf("purged doc expires at %d", got)
	}
}

func TestAutoCompaction(t *testing.T) {
	d := openTest(t)
	pad := strings.Repeat("x", 2000)
	req := map[string][]string{}
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("d%03d", i)
		rev, err := d.Put(`{"_id":"` + id + `","pad":"` + pad + `"}`)
		if err != nil {
			t.Fatal(err)
		}
		req[id] = []string{rev}
	}
	b, _ := json.Marshal(req)
	if _, err := d.Purge(string(b)); err != nil {
		t.Fatal(err)
	}
	free := func() float64 { return mustJSON(t, must(d.Stats()))["free"].(float64) }
	if free() == 0 {
		t.Fatal("nothing to reclaim after the purge")
	}
	if err := d.SetAutoCompaction(-1, 0); err == nil {
		t.Error("a negative bound was accepted")
	}
	if err := d.SetAutoCompaction(1<<40, 0); err != nil { // a bound not reached
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if free() == 0 {
		t.Fatal("compacted below the bound")
	}
	if err := d.SetAutoCompaction(1, 0.01); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for free() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("auto-compaction never ran")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
