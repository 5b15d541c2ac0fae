package indexstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/settee/settee/localdb/internal/indexstore"
	"github.com/settee/settee/localdb/localdbtest"
)

// checkIndex fails the test unless the index holds exactly the entries
// of want (id, value as JSON) in that order, each naming its document's
// winner.
func (s *ixStore) checkIndex(t *testing.T, ddoc, name string, want ...string) {
	t.Helper()
	got := s.scan(t, ddoc, name)
	var wantIDs []entry
	for i := 0; i < len(want); i += 2 {
		wantIDs = append(wantIDs, entry{id: want[i]})
	}
	if ids(got) != ids(wantIDs) {
		t.Fatalf("index %s holds %q, want %q", name, ids(got), ids(wantIDs))
	}
	for i, e := range got {
		if !bytes.Equal(e.value, keyOf(t, want[2*i+1])) {
			t.Errorf("entry of %s has key %x, want that of %s", e.id, e.value, want[2*i+1])
		}
		if !e.current {
			t.Errorf("entry of %s does not name its winner's row", e.id)
		}
	}
}

// TestWriterIndexesWinners: creating an index indexes the live documents
// that have its field; then each write of a winner adds its entry, moves
// it when the field changes, repoints it when only other members change,
// and removes it when the field goes or the document is deleted.
// Documents without the field, bodies that are not objects and design
// documents have no entry.
func TestWriterIndexesWinners(t *testing.T) {
	s := openStore(t)
	s.putAll(t, "pre", `{"n":3}`, "nofield", `{"m":1}`, "gone", `{"n":9}`, "_design/y", `{"n":0,"language":"javascript"}`)
	s.putAll(t, "gone", "")
	s.putAll(t, "_design/x", designBody("n"))
	s.checkIndex(t, "_design/x", "by-n", "pre", "3")

	s.putAll(t, "a", `{"n":1}`, "b", `{"n":5,"x":1}`, "c", `{"m":2}`, "d", `[1,2]`, "e", `{"n":null}`,
		"_design/y", `{"n":1,"language":"javascript"}`)
	s.checkIndex(t, "_design/x", "by-n", "e", "null", "a", "1", "pre", "3", "b", "5")

	s.putAll(t, "a", `{"n":7}`)
	s.checkIndex(t, "_design/x", "by-n", "e", "null", "pre", "3", "b", "5", "a", "7")

	s.putAll(t, "b", `{"n":5,"x":2}`, "pre", `{"n":3,"x":2}`)
	s.checkIndex(t, "_design/x", "by-n", "e", "null", "pre", "3", "b", "5", "a", "7")

	s.putAll(t, "c", `{"n":4}`, "pre", `{"m":3}`, "b", "", "d", `{"n":"d"}`)
	s.checkIndex(t, "_design/x", "by-n", "e", "null", "c", "4", "a", "7", "d", `"d"`)

	s.putAll(t, "b", `{"n":0}`)
	s.checkIndex(t, "_design/x", "by-n", "e", "null", "b", "0", "c", "4", "a", "7", "d", `"d"`)
}

// TestWriterSameTransaction: a document written several times in one
// transaction ends with the entry of its last winner only, its buffered
// entries written before they are replaced or deleted.
func TestWriterSameTransaction(t *testing.T) {
	s := openStore(t)
	s.putAll(t, "_design/x", designBody("n"))
	s.putAll(t, "a", `{"n":1}`, "a", `{"n":2}`, "b", `{"n":3}`, "b", "", "c", `{"n":4}`, "c", `{"n":4,"y":1}`)
	s.checkIndex(t, "_design/x", "by-n", "a", "2", "c", "4")
}

// TestWriterDesignChanges: a design document's new winner creates the
// indexes it gains, drops those it loses (their rows and entries), keeps
// an index it still defines the same way (same row, no new generation),
// and deleting it drops them all; each change of the set bumps the
// generation.
func TestWriterDesignChanges(t *testing.T) {
	s := openStore(t)
	s.putAll(t, "a", `{"n":1,"m":"x"}`, "b", `{"m":"y"}`)
	s.putAll(t, "_design/x", designBody("n"))
	gen := s.cache.Load().Gen()
	id := s.cache.Load().Find("_design/x", "by-n").ID
	s.checkIndex(t, "_design/x", "by-n", "a", "1")

	// The same views with another member: nothing to do.
	s.putAll(t, "_design/x", designBody("n")[:len(designBody("n"))-1]+`,"other":1}`)
	if set := s.cache.Load(); set.Gen() != gen || set.Find("_design/x", "by-n").ID != id {
		t.Errorf("an unchanged definition changed the set: gen %d, want %d", set.Gen(), gen)
	}

	s.putAll(t, "_design/x", designBody("m"))
	set := s.cache.Load()
	if set.Gen() <= gen || set.Find("_design/x", "by-n") != nil {
		t.Fatalf("after by-n was replaced: %v gen %d", set.Defs(), set.Gen())
	}
	s.checkIndex(t, "_design/x", "by-m", "a", `"x"`, "b", `"y"`)
	if n := localdbtest.Count(t, s.db, `SELECT (SELECT COUNT(*) FROM mango_entries WHERE ix_id NOT IN (SELECT ix_id FROM mango_indexes))
		+ (SELECT COUNT(*) FROM mango_fresh WHERE ix_id NOT IN (SELECT ix_id FROM mango_indexes))`); n != 0 {
		t.Errorf("the dropped index left %d entries", n)
	}

	s.putAll(t, "_design/x", "")
	if set := s.cache.Load(); len(set.Defs()) != 0 {
		t.Errorf("after the design doc's deletion: indexes %v", set.Defs())
	}
	if n := localdbtest.Count(t, s.db, "SELECT (SELECT COUNT(*) FROM mango_indexes) + (SELECT COUNT(*) FROM mango_entries) + (SELECT COUNT(*) FROM mango_fresh)"); n != 0 {
		t.Errorf("after the design doc's deletion: %d index rows left", n)
	}
}

// TestWriterFreshMerge: a document's entries go to mango_fresh, and the
// commit that leaves more than the limit there moves them all into
// mango_entries; queries read the same entries before and after.
func TestWriterFreshMerge(t *testing.T) {
	defer indexstore.SetFreshLimit(2)()
	s := openStore(t)
	s.putAll(t, "_design/x", designBody("n"))
	tables := func() (int64, int64) {
		return localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM mango_entries"), localdbtest.Count(t, s.db, "SELECT COUNT(*) FROM mango_fresh")
	}
	s.putAll(t, "a", `{"n":1}`, "b", `{"n":2}`)
	if main, fresh := tables(); main != 0 || fresh != 2 {
		t.Fatalf("at the limit: %d main, %d fresh entries; want 0, 2", main, fresh)
	}
	s.checkIndex(t, "_design/x", "by-n", "a", "1", "b", "2")
	s.putAll(t, "c", `{"n":0}`)
	if main, fresh := tables(); main != 3 || fresh != 0 {
		t.Fatalf("past the limit: %d main, %d fresh entries; want 3, 0", main, fresh)
	}
	if n := localdbtest.Count(t, s.db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'mango_fresh_rows'"); n != 0 {
		t.Errorf("mango_fresh_rows = %d after a merge, want 0", n)
	}
	s.checkIndex(t, "_design/x", "by-n", "c", "0", "a", "1", "b", "2")
	// Merged entries are changed where they now are.
	s.putAll(t, "a", `{"n":3}`, "b", "")
	s.checkIndex(t, "_design/x", "by-n", "c", "0", "a", "3")
}

// TestWriterRebuild: Rebuild makes every index again from the design
// documents (entries lost or stale are replaced), records the key
// encoding, and moves the generation past every one before it, so that a
// handle that cached the set before the rebuild reads it again: the
// rebuilt indexes may have other rows (ix_id) than they had.
func TestWriterRebuild(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	s.putAll(t, "a", `{"n":1,"m":"x"}`, "b", `{"n":2,"m":"y"}`)
	s.putAll(t, "_design/b", designBody("m"))
	s.putAll(t, "_design/a", designBody("n"))
	var other indexstore.Cache
	before, err := other.Current(ctx, s.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("DELETE FROM mango_entries; DELETE FROM mango_fresh; UPDATE meta SET value = 'old' WHERE key = 'mango_key_version'"); err != nil {
		t.Fatal(err)
	}

	s.mustUpdate(t, func(w *writeTx) error { return w.iw.Rebuild() })
	if got := s.cache.Load().Gen(); got <= before.Gen() {
		t.Errorf("generation %d after Rebuild, want above %d", got, before.Gen())
	}
	s.checkIndex(t, "_design/a", "by-n", "a", "1", "b", "2")
	s.checkIndex(t, "_design/b", "by-m", "a", `"x"`, "b", `"y"`)
	var v string
	if err := s.db.QueryRow("SELECT value FROM meta WHERE key = 'mango_key_version'").Scan(&v); err != nil || v != indexstore.KeyVersion {
		t.Errorf("mango_key_version = %q, %v; want %q", v, err, indexstore.KeyVersion)
	}
	seen, err := other.Current(ctx, s.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range s.cache.Load().Defs() {
		if got, want := seen.Find(ix.DDoc, ix.Name), s.cache.Load().Find(ix.DDoc, ix.Name); got == nil || got.ID != want.ID {
			t.Errorf("other handle's index %s/%s: %+v, want row %d", ix.DDoc, ix.Name, got, want.ID)
		}
	}
}

// TestWriterSaveRestore: a savepoint rolled back with the Writer's Save
// drops the entries buffered since and the index set changed since, so
// the commit writes no entry for the rolled-back document and publishes
// no index of the rolled-back design document.
func TestWriterSaveRestore(t *testing.T) {
	s := openStore(t)
	s.putAll(t, "_design/x", designBody("n"))
	rolledBack := func(w *writeTx, id, body string) error {
		if err := w.Flush(); err != nil {
			return err
		}
		if _, err := w.tx.Exec("SAVEPOINT doc"); err != nil {
			return err
		}
		restore := w.iw.Save()
		if err := w.put(id, body); err != nil {
			return err
		}
		restore()
		_, err := w.tx.Exec("ROLLBACK TO doc; RELEASE doc")
		return err
	}
	s.mustUpdate(t, func(w *writeTx) error {
		if err := w.put("a", `{"n":1}`); err != nil {
			return err
		}
		if err := rolledBack(w, "b", `{"n":2}`); err != nil {
			return err
		}
		return rolledBack(w, "_design/y", designBody("n"))
	})
	s.checkIndex(t, "_design/x", "by-n", "a", "1")
	if set := s.cache.Load(); set.Find("_design/y", "by-n") != nil {
		t.Errorf("the rolled-back design doc's index was published: %v", set.Defs())
	}
}
