package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

// Fixed cases where CouchDB 3's answer is known exactly and pouchdb-server
// answers differently (or the random test steers around them, see
// resendKnownWithNewHistory), so they are written down here against CouchDB's
// source rather than compared with a peer.

var bg = context.Background()

// replicate writes one revision with new_edits=false; revs is its history,
// newest first.
func replicate(t *testing.T, db *localdb.DB, id string, deleted bool, revs ...string) {
	t.Helper()
	gen, _, err := couchdoc.ParseRev(revs[0])
	if err != nil {
		t.Fatal(err)
	}
	r := &couchdoc.Revisions{Start: gen}
	for _, rev := range revs {
		_, h, err := couchdoc.ParseRev(rev)
		if err != nil {
			t.Fatal(err)
		}
		r.IDs = append(r.IDs, h)
	}
	doc := &couchdoc.Doc{ID: id, Rev: revs[0], Deleted: deleted, Body: json.RawMessage(`{"at":"` + revs[0] + `"}`), Revisions: r}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, false)
	if err != nil {
		t.Fatalf("BulkDocs(new_edits=false) %s %v: %v", id, revs, err)
	}
	for _, x := range res {
		if x.Error != "" {
			t.Fatalf("BulkDocs(new_edits=false) %s %v: %s %s", id, revs, x.Error, x.Reason)
		}
	}
}

func leavesOf(t *testing.T, db *localdb.DB, id string) []string {
	t.Helper()
	ors, err := db.OpenRevs(bg, id, nil, localdb.GetOptions{})
	if err != nil {
		t.Fatalf("OpenRevs(%s, all): %v", id, err)
	}
	var out []string
	for _, o := range ors {
		out = append(out, o.Doc.Rev)
	}
	sort.Strings(out)
	return out
}

func updateSeq(t *testing.T, db *localdb.DB) int64 {
	t.Helper()
	info, err := db.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	return info.UpdateSeq
}

// TestReplicatedKnownRevisionIgnored: CouchDB ignores a replicated revision
// it already has, whatever history comes with it. couch_db.erl
// prep_and_validate_replicated_updates keeps only the documents whose rev
// is a leaf of the merged tree and was not a leaf before ("this doc isn't
// a leaf or already exists in the tree. ignore but consider it a
// success."), so the longer history never reaches couch_key_tree:merge,
// the tree, the leaves and the update seq stay as they were. pouchdb-server
// agrees (pouchdb-adapter-utils updateDoc skips a revision it has).
func TestReplicatedKnownRevisionIgnored(t *testing.T) {
	for _, tc := range []struct {
		name   string
		resend []string
	}{
		{"known leaf", []string{"4-d", "3-c", "2-b", "1-a"}},
		{"known internal revision", []string{"3-c", "2-b", "1-a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := localdbtest.Open(t)
			replicate(t, db, "d", false, "2-b", "1-a")
			replicate(t, db, "d", false, "4-d", "3-c") // a second tree, rooted at 3-c
			before := updateSeq(t, db)
			replicate(t, db, "d", false, tc.resend...)
			if got := leavesOf(t, db, "d"); len(got) != 2 || got[0] != "2-b" || got[1] != "4-d" {
				t.Errorf("leaves %v, want [2-b 4-d]: CouchDB ignores a revision it has, with its history", got)
			}
			if after := updateSeq(t, db); after != before {
				t.Errorf("update seq %d -> %d, want unchanged", before, after)
			}
			doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true, Conflicts: true})
			if err != nil {
				t.Fatal(err)
			}
			if doc.Rev != "4-d" || doc.Revisions == nil || len(doc.Revisions.IDs) != 2 || len(doc.Conflicts) != 1 || doc.Conflicts[0] != "2-b" {
				t.Errorf("winner %s _revisions %+v _conflicts %v, want 4-d, [d c], [2-b]", doc.Rev, doc.Revisions, doc.Conflicts)
			}
		})
	}
}

// TestReplicatedPathJoiningTwoTrees: a new revision whose history overlaps
// two trees joins them. couch_key_tree merge_tree grafts the path into the
// first tree, which then shares 3-c and 4-d with the second; stem finds the
// duplicate keys and repair_tree re-merges every leaf path, leaving one
// tree with the single leaf 5-e. (pouchdb-server's doMerge leaves
// duplicate subtrees here, which is why the random test only sends such
// histories to its "chaos" documents and checks those against its model.)
func TestReplicatedPathJoiningTwoTrees(t *testing.T) {
	db := localdbtest.Open(t)
	replicate(t, db, "d", false, "2-b", "1-a")
	replicate(t, db, "d", false, "4-d", "3-c")
	replicate(t, db, "d", false, "5-e", "4-d", "3-c", "2-b", "1-a")
	if got := leavesOf(t, db, "d"); len(got) != 1 || got[0] != "5-e" {
		t.Fatalf("leaves %v, want [5-e]", got)
	}
	doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true, Conflicts: true, DeletedConflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Revisions == nil || join(doc.Revisions.IDs) != "e,d,c,b,a" || len(doc.Conflicts)+len(doc.DeletedConflicts) != 0 {
		t.Fatalf("5-e: _revisions %+v _conflicts %v %v, want [e d c b a] and none", doc.Revisions, doc.Conflicts, doc.DeletedConflicts)
	}
	res, err := db.RevsDiff(bg, map[string][]string{"d": {"3-c", "4-d", "6-f"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res["d"]; join(r.Missing) != "6-f" || join(r.PossibleAncestors) != "5-e" {
		t.Fatalf("revs_diff %+v, want missing [6-f], possible_ancestors [5-e]", r)
	}
}

// TestEditOnDeletedDocument: on a document whose leaves are all deleted,
// CouchDB 3 accepts only a live write without a rev, which extends the
// winning tombstone (couch_db_updater merge_rev_tree, "recreating a
// document that was previously deleted": RevDepth == 1 andalso not
// NewDeleted, else conflict). Naming the tombstone is a 409
// (apache/couchdb#3177, CouchDB 3.1), as is a tombstone without a rev.
// pouchdb-server accepts edits naming the tombstone.
func TestEditOnDeletedDocument(t *testing.T) {
	setup := func(t *testing.T) (*localdb.DB, string, string) {
		db := localdbtest.Open(t)
		r1, err := db.Put(bg, &couchdoc.Doc{ID: "d", Body: json.RawMessage(`{"v":1}`)})
		if err != nil {
			t.Fatal(err)
		}
		r2, err := db.Delete(bg, "d", r1)
		if err != nil {
			t.Fatal(err)
		}
		return db, r1, r2
	}
	refused := []struct {
		name    string
		rev     func(r1, r2 string) string
		deleted bool
	}{
		{"live edit naming the tombstone", func(_, r2 string) string { return r2 }, false},
		{"tombstone naming the tombstone", func(_, r2 string) string { return r2 }, true},
		{"tombstone without rev", func(_, _ string) string { return "" }, true},
		{"edit naming the deleted revision's parent", func(r1, _ string) string { return r1 }, false},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			db, r1, r2 := setup(t)
			rev, err := db.Put(bg, &couchdoc.Doc{ID: "d", Rev: tc.rev(r1, r2), Deleted: tc.deleted, Body: json.RawMessage(`{"v":2}`)})
			if !errors.Is(err, couchdoc.ErrConflict) {
				t.Errorf("Put: rev %q, err %v; CouchDB 3 answers 409 conflict", rev, err)
			}
			if got := leavesOf(t, db, "d"); len(got) != 1 || got[0] != r2 {
				t.Errorf("leaves %v, want [%s]", got, r2)
			}
		})
	}
	t.Run("delete naming the tombstone", func(t *testing.T) {
		// CouchDB's DELETE opens the document first and answers 404
		// deleted; through _bulk_docs the same write is a 409. Either
		// refusal is CouchDB's; a new tombstone is not.
		db, _, r2 := setup(t)
		rev, err := db.Delete(bg, "d", r2)
		if !errors.Is(err, couchdoc.ErrNotFound) && !errors.Is(err, couchdoc.ErrConflict) {
			t.Errorf("Delete: rev %q, err %v; CouchDB answers 404 (DELETE) or 409 (_bulk_docs)", rev, err)
		}
	})
	t.Run("live edit without rev recreates", func(t *testing.T) {
		db, r1, r2 := setup(t)
		rev, err := db.Put(bg, &couchdoc.Doc{ID: "d", Body: json.RawMessage(`{"v":3}`)})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true})
		if err != nil {
			t.Fatal(err)
		}
		_, h1, _ := couchdoc.ParseRev(r1)
		_, h2, _ := couchdoc.ParseRev(r2)
		if doc.Rev != rev || doc.Revisions.Start != 3 || len(doc.Revisions.IDs) != 3 || doc.Revisions.IDs[1] != h2 || doc.Revisions.IDs[2] != h1 {
			t.Fatalf("recreated %s with _revisions %+v, want generation 3 on top of %s", doc.Rev, doc.Revisions, r2)
		}
	})
}

// TestStemmedHistory: with revs_limit 3 a five-revision history keeps its
// last three revisions (couch_key_tree stem); the stemmed ones are
// forgotten, so _revs_diff reports them missing, and one that arrives
// again starts a tree of its own: it comes back as a conflict, as in
// CouchDB.
func TestStemmedHistory(t *testing.T) {
	db := localdbtest.OpenWith(t, &localdb.Options{RevsLimit: 3})
	replicate(t, db, "d", false, "5-e", "4-d", "3-c", "2-b", "1-a")
	doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != "5-e" || doc.Revisions == nil || join(doc.Revisions.IDs) != "e,d,c" {
		t.Fatalf("5-e: _revisions %+v, want e,d,c", doc.Revisions)
	}
	res, err := db.RevsDiff(bg, map[string][]string{"d": {"1-a", "2-b", "3-c", "5-e", "6-f"}})
	if err != nil {
		t.Fatal(err)
	}
	if r := res["d"]; join(sortedCopy(r.Missing)) != "1-a,2-b,6-f" || join(r.PossibleAncestors) != "5-e" {
		t.Fatalf("revs_diff %+v, want missing [1-a 2-b 6-f], possible_ancestors [5-e]", r)
	}
	replicate(t, db, "d", false, "2-b", "1-a")
	if got := leavesOf(t, db, "d"); join(got) != "2-b,5-e" {
		t.Fatalf("leaves %v, want [2-b 5-e]", got)
	}
	doc, err = db.Get(bg, "d", localdb.GetOptions{Conflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != "5-e" || join(doc.Conflicts) != "2-b" {
		t.Fatalf("winner %s _conflicts %v, want 5-e and [2-b]", doc.Rev, doc.Conflicts)
	}
}
