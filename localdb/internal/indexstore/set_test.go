package indexstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/settee/settee/localdb/internal/indexstore"
)

// TestCacheGeneration: Cache.Current keeps its set while the file's
// mango_generation is the set's (a row added behind its back is not
// read), and reads the indexes again when the generation changed, with
// or without the prepared GenQuery.
func TestCacheGeneration(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	genStmt, err := s.db.Prepare(indexstore.GenQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer genStmt.Close()
	for i, stmt := range []*sql.Stmt{nil, genStmt} {
		var c indexstore.Cache
		if c.Load() != nil {
			t.Fatal("a new Cache holds a set")
		}
		first, err := c.Current(ctx, s.db, stmt)
		if err != nil {
			t.Fatal(err)
		}
		if c.Load() != first {
			t.Error("Current did not cache the set it read")
		}
		view := `{"map":{"fields":{"n":"asc"},"partial_filter_selector":{}},"reduce":"_count","options":{"def":{"fields":["n"]}}}`
		ddoc := fmt.Sprintf("_design/g%d", i)
		if _, err := s.db.Exec("INSERT INTO mango_indexes (ddoc, name, view) VALUES (?, 'by-n', ?)", ddoc, view); err != nil {
			t.Fatal(err)
		}
		if same, err := c.Current(ctx, s.db, stmt); err != nil || same != first {
			t.Fatalf("Current with the generation unchanged = %p, %v; want the cached set %p", same, err, first)
		}
		if _, err := s.db.Exec("UPDATE meta SET value = ? WHERE key = 'mango_generation'", first.Gen()+1); err != nil {
			t.Fatal(err)
		}
		next, err := c.Current(ctx, s.db, stmt)
		if err != nil {
			t.Fatal(err)
		}
		if next.Gen() != first.Gen()+1 || next.Find(ddoc, "by-n") == nil || c.Load() != next {
			t.Errorf("after the generation changed: set %+v (gen %d), cached %p; want gen %d with %s/by-n, cached", next.Defs(), next.Gen(), c.Load(), first.Gen()+1, ddoc)
		}
		if got := next.Find(ddoc, "by-n").Def.Columns(); len(got) != 1 || got[0] != "n" {
			t.Errorf("index read back on %v, want [n]", got)
		}
	}
}

// TestCacheSeesOtherHandle: a design document written through one
// handle's Cache creates its index, published to that cache at commit;
// another handle's cache sees it at its next Current, and a read
// transaction that began before the commit still gets the set of its
// snapshot without the older set replacing the cached newer one.
func TestCacheSeesOtherHandle(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var other indexstore.Cache
	before, err := other.Current(ctx, s.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback()
	var docs int
	if err := old.QueryRow("SELECT COUNT(*) FROM docs").Scan(&docs); err != nil { // starts its snapshot
		t.Fatal(err)
	}

	s.putAll(t, "_design/x", designBody("n"))
	mine := s.cache.Load()
	if mine.Find("_design/x", "by-n") == nil || mine.Gen() <= before.Gen() {
		t.Fatalf("writer's cache after commit: %v gen %d; want by-n and a gen above %d", mine.Defs(), mine.Gen(), before.Gen())
	}
	seen, err := other.Current(ctx, s.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Gen() != mine.Gen() || seen.Find("_design/x", "by-n") == nil {
		t.Errorf("other handle's set: %v gen %d; want by-n at gen %d", seen.Defs(), seen.Gen(), mine.Gen())
	}

	snap, err := other.Current(ctx, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Gen() != before.Gen() || snap.Find("_design/x", "by-n") != nil {
		t.Errorf("older snapshot's set: %v gen %d; want none at gen %d", snap.Defs(), snap.Gen(), before.Gen())
	}
	if other.Load() != seen {
		t.Error("reading an older snapshot replaced the cached newer set")
	}
}
