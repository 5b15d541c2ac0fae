package localdb_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func TestReplicatedConflictsAndWinner(t *testing.T) {
	db := open(t)
	repl(t, db, "d", false, `{"v":1}`, "1-a")
	repl(t, db, "d", false, `{"v":2}`, "2-b", "1-a")
	repl(t, db, "d", false, `{"v":3}`, "2-c", "1-a")
	repl(t, db, "d", true, `{}`, "3-d", "2-c", "1-a")
	// Live 2-b beats the deleted 3-d.
	doc, err := db.Get(bg, "d", localdb.GetOptions{Conflicts: true, DeletedConflicts: true, Revs: true, RevsInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != "2-b" || doc.Conflicts != nil || !reflect.DeepEqual(doc.DeletedConflicts, []string{"3-d"}) {
		t.Fatalf("winner %s conflicts %v deleted %v", doc.Rev, doc.Conflicts, doc.DeletedConflicts)
	}
	if doc.Revisions.Start != 2 || !reflect.DeepEqual(doc.Revisions.IDs, []string{"b", "a"}) {
		t.Fatalf("revisions %+v", doc.Revisions)
	}
	// 1-a was stored with a body, so it is available.
	if !reflect.DeepEqual(doc.RevsInfo, []couchdoc.RevInfo{{Rev: "2-b", Status: "available"}, {Rev: "1-a", Status: "available"}}) {
		t.Fatalf("revs_info %+v", doc.RevsInfo)
	}
	repl(t, db, "d", false, `{"v":4}`, "2-e", "1-a")
	doc, _ = db.Get(bg, "d", localdb.GetOptions{Conflicts: true})
	if doc.Rev != "2-e" || !reflect.DeepEqual(doc.Conflicts, []string{"2-b"}) {
		t.Fatalf("winner %s conflicts %v", doc.Rev, doc.Conflicts)
	}
	if got := leaves(t, db, "d"); !reflect.DeepEqual(got, []string{"2-e", "2-b", "3-d"}) {
		t.Fatalf("leaves %v", got)
	}
	var conflicted []string
	db.Conflicts(bg, func(id string) error { conflicted = append(conflicted, id); return nil })
	if !reflect.DeepEqual(conflicted, []string{"d"}) {
		t.Fatalf("conflicts %v", conflicted)
	}
	// Local edit of a losing leaf is allowed (it is a leaf).
	r := put(t, db, "d", "2-b", `{"v":5}`)
	if r[:2] != "3-" {
		t.Fatalf("rev %s", r)
	}
}

func TestReplicatedIdempotentAndAncestorsById(t *testing.T) {
	db := open(t)
	repl(t, db, "d", false, `{"v":3}`, "3-c", "2-b", "1-a")
	info, _ := db.Info(bg)
	repl(t, db, "d", false, `{"v":3}`, "3-c", "2-b", "1-a")
	repl(t, db, "d", false, `{"v":3}`, "3-c")
	info2, _ := db.Info(bg)
	if info.UpdateSeq != info2.UpdateSeq {
		t.Fatalf("re-insert made a new seq: %d -> %d", info.UpdateSeq, info2.UpdateSeq)
	}
	// 2-b is known only by id.
	_, err := db.Get(bg, "d", localdb.GetOptions{Rev: "2-b"})
	wantErr(t, err, couchdoc.ErrNotFound)
	doc, _ := db.Get(bg, "d", localdb.GetOptions{RevsInfo: true})
	want := []couchdoc.RevInfo{{Rev: "3-c", Status: "available"}, {Rev: "2-b", Status: "missing"}, {Rev: "1-a", Status: "missing"}}
	if !reflect.DeepEqual(doc.RevsInfo, want) {
		t.Fatalf("revs_info %+v", doc.RevsInfo)
	}
	ors, err := db.OpenRevs(bg, "d", []string{"3-c", "2-b", "9-f"}, localdb.GetOptions{Revs: true})
	if err != nil || len(ors) != 3 || ors[0].Doc == nil || ors[1].Missing != "2-b" || ors[2].Missing != "9-f" {
		t.Fatalf("open_revs %+v %v", ors, err)
	}
	// latest: 2-b resolves to its leaf 3-c.
	ors, _ = db.OpenRevs(bg, "d", []string{"2-b"}, localdb.GetOptions{Latest: true})
	if len(ors) != 1 || ors[0].Doc == nil || ors[0].Doc.Rev != "3-c" {
		t.Fatalf("latest %+v", ors)
	}
	ors, _ = db.OpenRevs(bg, "nodoc", []string{"1-a"}, localdb.GetOptions{})
	if len(ors) != 1 || ors[0].Missing != "1-a" {
		t.Fatalf("missing doc %+v", ors)
	}
	_, err = db.OpenRevs(bg, "nodoc", nil, localdb.GetOptions{})
	wantErr(t, err, couchdoc.ErrNotFound)
}

func TestReplicatedPartialOverlapAndStemmed(t *testing.T) {
	db := open(t)
	repl(t, db, "d", false, `{}`, "5-e", "4-d")                       // stemmed history
	repl(t, db, "d", false, `{}`, "3-c", "2-b", "1-a")                // older, unconnected: its own tree
	repl(t, db, "d", false, `{}`, "7-9a", "6-f", "5-e", "4-d", "3-c") // overlaps both: joins them
	repl(t, db, "d", false, `{}`, "3-9b", "2-b", "1-a")               // a branch low down
	doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != "7-9a" || doc.Revisions.Start != 7 || len(doc.Revisions.IDs) != 7 {
		t.Fatalf("doc %s revisions %+v", doc.Rev, doc.Revisions)
	}
	if got := leaves(t, db, "d"); !reflect.DeepEqual(got, []string{"7-9a", "3-9b"}) {
		t.Fatalf("leaves %v", got)
	}
}

func TestReplicatedBadInputChangesNothing(t *testing.T) {
	db := open(t)
	docs := []*couchdoc.Doc{
		{ID: "a", Rev: "2-b", Revisions: &couchdoc.Revisions{Start: 3, IDs: []string{"b", "a"}}},
		{ID: "b", Rev: "2-b", Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{"c", "a"}}},
		{ID: "c", Rev: "bogus"},
		{ID: "d"},
		{ID: "ok", Rev: "1-a"},
	}
	res, err := db.BulkDocs(bg, docs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res[:4] {
		if r.Error != "bad_request" {
			t.Errorf("doc %d: %+v", i, r)
		}
	}
	if !res[4].OK || res[4].Rev != "1-a" {
		t.Errorf("good doc: %+v", res[4])
	}
	info, _ := db.Info(bg)
	if info.DocCount != 1 || info.UpdateSeq != 1 {
		t.Fatalf("info %+v", info)
	}
}

func TestRevsLimitStems(t *testing.T) {
	db := open(t)
	if err := db.SetRevsLimit(bg, 3); err != nil {
		t.Fatal(err)
	}
	rev := ""
	for i := 0; i < 6; i++ {
		rev = put(t, db, "d", rev, fmt.Sprintf(`{"i":%d}`, i))
	}
	doc, _ := db.Get(bg, "d", localdb.GetOptions{Revs: true})
	if doc.Revisions.Start != 6 || len(doc.Revisions.IDs) != 3 {
		t.Fatalf("revisions %+v", doc.Revisions)
	}
	// A long replicated history is stemmed too.
	hist := []string{}
	for g := 10; g >= 1; g-- {
		hist = append(hist, fmt.Sprintf("%d-%x", g, g))
	}
	repl(t, db, "e", false, `{}`, hist...)
	doc, _ = db.Get(bg, "e", localdb.GetOptions{Revs: true})
	if doc.Revisions.Start != 10 || len(doc.Revisions.IDs) != 3 {
		t.Fatalf("revisions %+v", doc.Revisions)
	}
	if db.RevsLimit() != 3 {
		t.Fatal("revs limit")
	}
}

func TestRevsDiff(t *testing.T) {
	db := open(t)
	repl(t, db, "d", false, `{}`, "3-c", "2-b", "1-a")
	repl(t, db, "d", true, `{}`, "2-9", "1-a")
	got, err := db.RevsDiff(bg, map[string][]string{
		"d":     {"1-a", "3-c", "4-d", "2-7"},
		"other": {"1-a", "2-b"},
		"full":  {"2-b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]couchdoc.RevsDiffResult{
		"d":     {Missing: []string{"2-7", "4-d"}, PossibleAncestors: []string{"3-c", "2-9"}}, // sorted, as CouchDB
		"other": {Missing: []string{"1-a", "2-b"}},
		"full":  {Missing: []string{"2-b"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("revs_diff %+v", got)
	}
	got, _ = db.RevsDiff(bg, map[string][]string{"d": {"3-c", "2-b"}})
	if len(got) != 0 {
		t.Fatalf("nothing missing, got %+v", got)
	}
	_, err = db.RevsDiff(bg, map[string][]string{"d": {"x"}})
	wantErr(t, err, couchdoc.ErrBadRequest)
}

// A revision the tree has, arriving again with a longer history, is
// ignored with that history (couch_db.erl prep_and_validate_replicated_updates
// keeps only documents whose rev becomes a new leaf): no new seq, the
// stemmed branch stays apart.
func TestReplicatedKnownRevIgnoredWithHistory(t *testing.T) {
	db := open(t)
	repl(t, db, "d", false, `{}`, "2-b", "1-a")
	repl(t, db, "d", false, `{}`, "4-d")
	before, _ := db.Info(bg)
	repl(t, db, "d", false, `{}`, "4-d", "3-c", "2-b", "1-a")
	repl(t, db, "d", false, `{"late":1}`, "1-a")
	after, _ := db.Info(bg)
	if after.UpdateSeq != before.UpdateSeq {
		t.Fatalf("seq %d -> %d", before.UpdateSeq, after.UpdateSeq)
	}
	doc, _ := db.Get(bg, "d", localdb.GetOptions{Revs: true})
	if doc.Rev != "4-d" || len(doc.Revisions.IDs) != 1 {
		t.Fatalf("doc %s %+v", doc.Rev, doc.Revisions)
	}
	if got := leaves(t, db, "d"); !reflect.DeepEqual(got, []string{"4-d", "2-b"}) {
		t.Fatalf("leaves %v", got)
	}
	// A new leaf whose history spans both trees joins them.
	repl(t, db, "d", false, `{}`, "5-e", "4-d", "3-c", "2-b", "1-a")
	if got := leaves(t, db, "d"); !reflect.DeepEqual(got, []string{"5-e"}) {
		t.Fatalf("leaves after join %v", got)
	}
}

// The cases of CouchDB's chttpd_revs_diff_tests. The docs are written as
// that test does: new_edits=false with _revisions and no _rev.
func TestRevsDiffCouchDBCases(t *testing.T) {
	db := open(t)
	mk := func(id string, start int, ids ...string) *couchdoc.Doc {
		return &couchdoc.Doc{ID: id, Revisions: &couchdoc.Revisions{Start: start, IDs: ids}}
	}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{mk("doc1", 2, "b", "a"), mk("doc1", 2, "c", "a"), mk("doc2", 1, "d")}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.OK {
			t.Fatalf("bulk_docs %+v", r)
		}
	}
	for _, tc := range []struct {
		name string
		req  map[string][]string
		want map[string]couchdoc.RevsDiffResult
	}{
		{"empty", map[string][]string{}, map[string]couchdoc.RevsDiffResult{}},
		{"no revs", map[string][]string{"doc1": {}, "non_existent_doc": {}}, map[string]couchdoc.RevsDiffResult{}},
		{"non-existent doc", map[string][]string{"non_existent_doc": {"1-e"}},
			map[string]couchdoc.RevsDiffResult{"non_existent_doc": {Missing: []string{"1-e"}}}},
		{"all revs", map[string][]string{"doc1": {"2-b", "2-c"}, "doc2": {"1-d"}}, map[string]couchdoc.RevsDiffResult{}},
		{"some missing", map[string][]string{"doc1": {"2-b", "1-ef", "2-de", "3-fe"}, "doc2": {"1-9"}},
			map[string]couchdoc.RevsDiffResult{
				"doc1": {Missing: []string{"1-ef", "2-de", "3-fe"}, PossibleAncestors: []string{"2-c", "2-b"}},
				"doc2": {Missing: []string{"1-9"}},
			}},
	} {
		got, err := db.RevsDiff(bg, tc.req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The _revs_diff exchange of the replication protocol spec (2.4.2.4.3).
func TestRevsDiffSpecExample(t *testing.T) {
	db := open(t)
	repl(t, db, "foo", false, `{}`, "3-6a540f3d701ac518d3b9733d673c5484", "2-7051cbe5c8faecd085a3fa619e6e6331", "1-967a00dff5e02add41819138abb32840")
	repl(t, db, "bar", false, `{}`, "1-967a00dff5e02add41819138abb3284d")
	got, err := db.RevsDiff(bg, map[string][]string{
		"baz": {"2-7051cbe5c8faecd085a3fa619e6e6337"},
		"foo": {"3-6a540f3d701ac518d3b9733d673c5484"},
		"bar": {"1-d4e501ab47de6b2000fc8a02f84a0c77", "1-967a00dff5e02add41819138abb3284d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]couchdoc.RevsDiffResult{
		"baz": {Missing: []string{"2-7051cbe5c8faecd085a3fa619e6e6337"}},
		"bar": {Missing: []string{"1-d4e501ab47de6b2000fc8a02f84a0c77"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	// The spec's _bulk_docs body (2.4.2.5.4) parsed and written as is.
	body := `{"_id":"LambStew","_rev":"1-34c318924a8f327223eed702ddfdc66d","_revisions":{"ids":["34c318924a8f327223eed702ddfdc66d"],"start":1},"servings":6,"subtitle":"Delicious with scone topping","title":"Lamb Stew"}`
	doc, err := couchdoc.ParseDoc([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, false)
	if err != nil || !res[0].OK {
		t.Fatalf("%+v %v", res, err)
	}
	back, _ := db.Get(bg, "LambStew", localdb.GetOptions{Revs: true})
	out, _ := back.MarshalJSON()
	if string(out) != body[:strings.Index(body, `,"_revisions"`)]+`,"servings":6,"subtitle":"Delicious with scone topping","title":"Lamb Stew","_revisions":{"start":1,"ids":["34c318924a8f327223eed702ddfdc66d"]}}` {
		t.Fatalf("round trip: %s", out)
	}
}

// TestBatchMixesBufferedAndDirectWrites: new documents are buffered and
// written with multi-row inserts; documents with attachments, a failing
// one rolled back to its savepoint, and a second write of a buffered
// document must all see and keep the buffered rows.
func TestBatchMixesBufferedAndDirectWrites(t *testing.T) {
	db := open(t)
	var docs []*couchdoc.Doc
	for i := 0; i < 250; i++ {
		docs = append(docs, replDoc(t, fmt.Sprintf("n%03d", i), false, `{"i":1}`, "1-a"))
		switch i {
		case 10: // with an attachment: written directly, after a flush
			d := replDoc(t, "att", false, `{}`, "1-a")
			d.Attachments = map[string]*couchdoc.Attachment{"f": {Data: []byte("x")}}
			docs = append(docs, d)
		case 20: // fails inside its savepoint
			d := replDoc(t, "bad", false, `{}`, "1-a")
			d.Attachments = map[string]*couchdoc.Attachment{"f": {Body: strings.NewReader("xyz"), Length: 5}}
			docs = append(docs, d)
		case 30: // a second revision of a buffered document
			docs = append(docs, replDoc(t, "n005", false, `{"i":2}`, "2-b", "1-a"))
		}
	}
	res, err := db.BulkDocs(bg, docs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if (r.ID == "bad") == r.OK {
			t.Fatalf("result %d %+v", i, r)
		}
	}
	info, _ := db.Info(bg)
	// n005 is named twice: one sequence for it, as CouchDB gives.
	if info.DocCount != 251 || info.UpdateSeq != 251 {
		t.Fatalf("info %+v", info)
	}
	for _, id := range []string{"n000", "n249", "att"} {
		if _, err := db.Get(bg, id, localdb.GetOptions{}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	if d, _ := db.Get(bg, "n005", localdb.GetOptions{}); d == nil || d.Rev != "2-b" {
		t.Fatalf("n005: %+v", d)
	}
}
