package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestPurgeCloneCompact(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.db")
	var put okResult
	mustJSON(t, ok(t, "put", seed, "secret", `{"pin":"1234"}`), &put)
	ok(t, "put", seed, "keep", `{}`)

	var purged map[string][]string
	mustJSON(t, ok(t, "purge", seed, "secret"), &purged)
	if len(purged["secret"]) != 1 || purged["secret"][0] != put.Rev {
		t.Fatalf("purge = %v", purged)
	}
	failsWith(t, cli(t, nil, "get", seed, "secret"), exitNotFound)
	var info map[string]any
	mustJSON(t, ok(t, "info", seed), &info)
	if info["purge_seq"] != 1.0 || info["doc_count"] != 1.0 {
		t.Fatalf("info after purge = %v", info)
	}

	var sizes struct {
		Before int64 `json:"file_before"`
		After  int64 `json:"file_after"`
	}
	mustJSON(t, ok(t, "compact", seed), &sizes)
	if sizes.After <= 0 || sizes.After > sizes.Before {
		t.Fatalf("compact = %+v", sizes)
	}

	clone := filepath.Join(dir, "device.db")
	var c struct {
		UUID  string   `json:"uuid"`
		Seeds []string `json:"seeds"`
	}
	mustJSON(t, ok(t, "clone", seed, clone), &c)
	if c.UUID == "" || len(c.Seeds) != 1 || c.Seeds[0] != info["uuid"] || c.UUID == info["uuid"] {
		t.Fatalf("clone = %+v, seed uuid %v", c, info["uuid"])
	}
	if out := ok(t, "get", clone, "keep"); !strings.Contains(out, `"keep"`) {
		t.Fatalf("clone lacks keep: %s", out)
	}
	failsWith(t, cli(t, nil, "clone", seed, clone), exitFailure, "exists")
	failsWith(t, cli(t, nil, "clone", filepath.Join(dir, "nope.db"), filepath.Join(dir, "x.db")), exitNotFound)
}

func TestExpire(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	ok(t, "put", db, "tmp", `{}`)
	var e struct {
		ID      string  `json:"id"`
		Expires *string `json:"expires"`
	}
	mustJSON(t, ok(t, "expire", db, "tmp"), &e)
	if e.Expires != nil {
		t.Fatalf("fresh doc expires: %v", *e.Expires)
	}
	mustJSON(t, ok(t, "expire", db, "tmp", "--at", "2999-01-02T03:04:05Z"), &e)
	if e.Expires == nil || *e.Expires != "2999-01-02T03:04:05Z" {
		t.Fatalf("expire --at = %+v", e)
	}
	mustJSON(t, ok(t, "expire", db, "tmp", "--clear"), &e)
	if e.Expires != nil {
		t.Fatalf("expire --clear = %v", *e.Expires)
	}
	failsWith(t, cli(t, nil, "expire", db, "tmp", "--in", "1h", "--clear"), exitUsage)
	failsWith(t, cli(t, nil, "expire", db, "nope", "--in", "1h"), exitNotFound)
	ok(t, "expire", db, "tmp", "--at", "2001-01-01T00:00:00Z") // already past
	failsWith(t, cli(t, nil, "get", db, "tmp"), exitNotFound)
}
