package localdb_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// feedSeqs lists the changes feed as id -> seq.
func feedSeqs(t *testing.T, db *localdb.DB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	if _, err := db.Changes(bg, localdb.ChangesOptions{}, func(c *localdb.Change) error {
		out[c.ID] = c.Seq
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPurgeWholeDoc(t *testing.T) {
	db := open(t)
	a1 := put(t, db, "a", "", `{"v":1}`)
	a2 := put(t, db, "a", a1, `{"v":2}`)
	put(t, db, "b", "", `{}`)
	d, err := db.Delete(bg, "b", mustGet(t, db, "b"))
	if err != nil {
		t.Fatal(err)
	}
	before := updateSeq(t, db)
	got, err := db.Purge(bg, map[string][]string{"a": {a2}, "b": {d}, "nope": {"1-abc"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {a2}, "b": {d}, "nope": {}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("purged %v, want %v", got, want)
	}
	if _, err := db.Get(bg, "a", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Errorf("get purged doc: %v, want not found", err)
	}
	if f := feedSeqs(t, db); len(f) != 0 {
		t.Errorf("feed after purge: %v", f)
	}
	info, err := db.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	if info.DocCount != 0 || info.DocDelCount != 0 || info.PurgeSeq != 3 || info.UpdateSeq != before+1 {
		t.Errorf("info %+v, want no docs, purge_seq 3, update_seq %d", info, before+1)
	}
	// The purged revisions are unknown: revs_diff asks for them again, and
	// the id is free to be created anew at generation 1.
	diff, err := db.RevsDiff(bg, map[string][]string{"a": {a1, a2}})
	if err != nil {
		t.Fatal(err)
	}
	if m := diff["a"].Missing; len(m) != 2 {
		t.Errorf("revs_diff after purge: %v", diff)
	}
	if r := put(t, db, "a", "", `{"v":3}`); r[:2] != "1-" {
		t.Errorf("recreated as %s", r)
	}
	// The sequence never goes back: the new write is above the purge.
	if s := feedSeqs(t, db)["a"]; s <= before+1 {
		t.Errorf("seq after purge %d, want > %d", s, before+1)
	}
}

func mustGet(t *testing.T, db *localdb.DB, id string) string {
	t.Helper()
	d, err := db.Get(bg, id, localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Rev
}

func TestPurgeOneLeafOfConflict(t *testing.T) {
	db := open(t)
	repl(t, db, "c", false, `{"side":"x"}`, "2-bb", "1-aa")
	repl(t, db, "c", false, `{"side":"y"}`, "2-cc", "1-aa")
	put(t, db, "other", "", `{}`)
	old := feedSeqs(t, db)["c"]
	got, err := db.Purge(bg, map[string][]string{"c": {"2-cc", "1-aa"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["c"], []string{"2-cc"}) {
		t.Fatalf("purged %v, want only the leaf 2-cc", got)
	}
	doc, err := db.Get(bg, "c", localdb.GetOptions{Conflicts: true, Revs: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != "2-bb" || len(doc.Conflicts) != 0 || len(doc.Revisions.IDs) != 2 {
		t.Errorf("after purge: rev %s conflicts %v history %v", doc.Rev, doc.Conflicts, doc.Revisions)
	}
	if s := feedSeqs(t, db)["c"]; s <= old || s != updateSeq(t, db) {
		t.Errorf("doc seq %d (was %d, update seq %d): want it moved to the top", s, old, updateSeq(t, db))
	}
	if _, err := db.OpenRevs(bg, "c", []string{"2-cc"}, localdb.GetOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestPurgeNothingStillCounts(t *testing.T) {
	db := open(t)
	r1 := put(t, db, "a", "", `{}`)
	put(t, db, "a", r1, `{}`)
	seq := updateSeq(t, db)
	got, err := db.Purge(bg, map[string][]string{"a": {r1}}) // not a leaf
	if err != nil {
		t.Fatal(err)
	}
	if len(got["a"]) != 0 {
		t.Errorf("purged %v, want nothing", got)
	}
	info, _ := db.Info(bg)
	if info.PurgeSeq != 1 || info.UpdateSeq != seq+1 || info.DocCount != 1 {
		t.Errorf("info %+v", info)
	}
}

func TestPurgeBadRevChangesNothing(t *testing.T) {
	db := open(t)
	r := put(t, db, "a", "", `{}`)
	_, err := db.Purge(bg, map[string][]string{"a": {r}, "b": {"garbage"}})
	wantErr(t, err, couchdoc.ErrBadRequest)
	if mustGet(t, db, "a") != r {
		t.Error("doc changed")
	}
	info, _ := db.Info(bg)
	if info.PurgeSeq != 0 {
		t.Errorf("purge_seq %d after a rejected purge", info.PurgeSeq)
	}
}

func TestPurgedInfosLimit(t *testing.T) {
	db := open(t)
	if n, err := db.PurgedInfosLimit(bg); err != nil || n != localdb.DefaultPurgedInfosLimit {
		t.Fatalf("default limit %d, %v", n, err)
	}
	wantErr(t, db.SetPurgedInfosLimit(bg, 0), couchdoc.ErrBadRequest)
	for _, id := range []string{"a", "b", "c"} {
		r := put(t, db, id, "", `{}`)
		if _, err := db.Purge(bg, map[string][]string{id: {r}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetPurgedInfosLimit(bg, 2); err != nil {
		t.Fatal(err)
	}
	infos, err := db.PurgedInfos(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[0].ID != "b" || infos[1].PurgeSeq != 3 {
		t.Errorf("infos %+v, want b and c", infos)
	}
	if _, err := db.Purge(bg, map[string][]string{"d": {"1-aa"}}); err != nil {
		t.Fatal(err)
	}
	infos, _ = db.PurgedInfos(bg)
	if len(infos) != 2 || infos[1].ID != "d" || infos[1].PurgeSeq != 4 {
		t.Errorf("infos %+v, want c and d", infos)
	}
}
