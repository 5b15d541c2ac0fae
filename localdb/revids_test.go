package localdb_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// Revision ids are opaque, as in CouchDB 3.5 (couchdoc.ParseRev): the store
// takes any "N-anything" with new_edits=false, finds it again by any
// spelling CouchDB takes for it, and answers it as CouchDB does.
func TestOpaqueRevIDs(t *testing.T) {
	db := open(t)
	hex32 := "0123456789abcdef0123456789abcdef"
	repl(t, db, "foo", false, `{"v":1}`, "1-x")
	repl(t, db, "imp", false, `{"v":2}`, "2-import42", "1-import41")
	repl(t, db, "empty", false, `{}`, "1-")
	repl(t, db, "long", false, `{}`, "3-"+hex32+hex32, "2-"+strings.ToUpper(hex32+hex32))
	repl(t, db, "upper", false, `{}`, "2-"+strings.ToUpper(hex32), "1-0123456789abcdef")
	for _, tc := range []struct{ id, rev, want string }{
		{"foo", "", "1-x"},
		{"foo", "1-x", "1-x"},
		{"foo", "01-x", "1-x"},
		{"imp", "", "2-import42"},
		{"empty", "1-", "1-"},
		{"long", "", "3-" + hex32 + hex32},
		{"upper", "", "2-" + hex32},
		{"upper", "2-" + strings.ToUpper(hex32), "2-" + hex32},
	} {
		doc, err := db.Get(bg, tc.id, localdb.GetOptions{Rev: tc.rev, Revs: true})
		if err != nil {
			t.Fatalf("get %s %s: %v", tc.id, tc.rev, err)
		}
		if doc.Rev != tc.want {
			t.Fatalf("get %s %s: rev %q, want %q", tc.id, tc.rev, doc.Rev, tc.want)
		}
	}
	doc, err := db.Get(bg, "upper", localdb.GetOptions{Revs: true})
	if err != nil {
		t.Fatal(err)
	}
	// The 16-byte ancestor id prints as hex, as CouchDB's revid_to_str does.
	if want := []string{hex32, "30313233343536373839616263646566"}; !reflect.DeepEqual(doc.Revisions.IDs, want) {
		t.Fatalf("_revisions %v, want %v", doc.Revisions.IDs, want)
	}
	doc, err = db.Get(bg, "long", localdb.GetOptions{Revs: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{hex32 + hex32, strings.ToUpper(hex32 + hex32)}; !reflect.DeepEqual(doc.Revisions.IDs, want) {
		t.Fatalf("_revisions %v, want %v", doc.Revisions.IDs, want)
	}

	// Missing revisions of any shape are missing, not refused.
	_, err = db.Get(bg, "doc-none", localdb.GetOptions{Rev: "1-x"})
	wantErr(t, err, couchdoc.ErrNotFound)
	_, err = db.Get(bg, "foo", localdb.GetOptions{Rev: "1-y"})
	wantErr(t, err, couchdoc.ErrNotFound)
	_, err = db.Get(bg, "foo", localdb.GetOptions{Rev: "0-x"})
	wantErr(t, err, couchdoc.ErrNotFound)
	ors, err := db.OpenRevs(bg, "foo", []string{"1-y", "+1-x", "1-ABCDEFABCDEFABCDEFABCDEFABCDEFAB"}, localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ors) != 3 || ors[0].Missing != "1-y" || ors[1].Doc == nil || ors[1].Doc.Rev != "1-x" || ors[2].Missing != "1-abcdefabcdefabcdefabcdefabcdefab" {
		t.Fatalf("open_revs %+v", ors)
	}

	diff, err := db.RevsDiff(bg, map[string][]string{
		"foo": {"2-randomid", "1-x", "01-x"},
		"new": {"1-" + strings.ToUpper(hex32)},
		"imp": {"1-import41", "3-z"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]couchdoc.RevsDiffResult{
		// 1-x is listed twice (as 01-x too): one is missing, as CouchDB
		// answers (couchdb35-extra/revids#18).
		"foo": {Missing: []string{"1-x", "2-randomid"}, PossibleAncestors: []string{"1-x"}},
		"new": {Missing: []string{"1-" + hex32}},
		"imp": {Missing: []string{"3-z"}, PossibleAncestors: []string{"2-import42"}},
	}
	if !reflect.DeepEqual(diff, want) {
		t.Fatalf("revs_diff %+v, want %+v", diff, want)
	}

	// A rev spelled another way is the same revision: nothing new.
	seq := updateSeq(t, db)
	repl(t, db, "upper", false, `{}`, "2-"+hex32, "1-30313233343536373839616263646566")
	if updateSeq(t, db) != seq {
		t.Fatal("a known revision spelled differently was written again")
	}
	// An edit of a leaf named in another spelling.
	if rev := put(t, db, "foo", "+1-x", `{"v":3}`); !strings.HasPrefix(rev, "2-") {
		t.Fatalf("edit gave %q", rev)
	}
}

// TestRevIDWinner checks the winner among leaves of one generation with
// ids of different shapes: CouchDB compares {Pos, RevId} where RevId is
// the 16 bytes of a 32-digit hex id and the bytes of any other.
func TestRevIDWinner(t *testing.T) {
	db := open(t)
	// "x" (0x78) beats the hex id whose first byte is 0x01, though "0..."
	// would lose to "x" as text too; "61..." is the bytes "abc...": "b"
	// beats it, "a" (its prefix) does not.
	for _, tc := range []struct {
		leaves []string
		win    string
	}{
		{[]string{"2-0123456789abcdef0123456789abcdef", "2-x"}, "2-x"},
		{[]string{"2-61626364656667686970717273747576", "2-b"}, "2-b"},
		{[]string{"2-61626364656667686970717273747576", "2-a"}, "2-61626364656667686970717273747576"},
		// "f0" as text would beat "e..." hex; as bytes 0xe0.. > "f0" (0x66).
		{[]string{"2-e0000000000000000000000000000000", "2-f0"}, "2-e0000000000000000000000000000000"},
		{[]string{"2-import42", "2-import5"}, "2-import5"},
		{[]string{"2-", "2-a"}, "2-a"},
	} {
		id := "w" + strings.Join(tc.leaves, "|")
		for _, l := range tc.leaves {
			repl(t, db, id, false, `{}`, l, "1-root")
		}
		doc, err := db.Get(bg, id, localdb.GetOptions{Conflicts: true})
		if err != nil {
			t.Fatal(err)
		}
		if doc.Rev != tc.win {
			t.Errorf("leaves %v: winner %s, want %s", tc.leaves, doc.Rev, tc.win)
		}
		if got := leaves(t, db, id); got[0] != tc.win {
			t.Errorf("leaves %v: open_revs=all starts with %s", tc.leaves, got[0])
		}
	}
}

// TestGenerationBounds checks generation 0 (CouchDB stores "0-x" and
// histories down to it) and that a generation past MaxGen, which a tree
// cannot hold, is refused alone with new_edits=false and found nowhere.
func TestGenerationBounds(t *testing.T) {
	db := open(t)
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{
		{ID: "a", Rev: "0-x"},
		{ID: "b", Rev: "1-x"},
		{ID: "c", Rev: "3000000000-x"},
		{ID: "d", Rev: "2-a", Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{"a", "b", "c"}}},
		{ID: "e", Rev: "1-a", Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"a", "b", "c"}}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err() != nil || res[1].Err() != nil || res[2].Error != "bad_request" || res[3].Err() != nil || res[4].Error != "bad_request" {
		t.Fatalf("%+v", res)
	}
	if rev := put(t, db, "a", "0-x", `{"v":1}`); !strings.HasPrefix(rev, "1-") {
		t.Fatalf("edit of 0-x gave %s", rev)
	}
	doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true})
	if err != nil || doc.Revisions.Start != 2 || len(doc.Revisions.IDs) != 3 {
		t.Fatalf("d: %v %+v", err, doc)
	}
	diff, err := db.RevsDiff(bg, map[string][]string{"b": {"0-x", "3000000000-x"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := diff["b"].Missing; len(m) != 2 {
		t.Fatalf("revs_diff %+v", diff)
	}
}
