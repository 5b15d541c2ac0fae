package localdb_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// conflicted writes document id with two live leaves, 2-bbb (the winner,
// with attachment "w.txt") and 2-aaa, and returns the store.
func conflicted(t *testing.T, id string) *localdb.DB {
	t.Helper()
	db := open(t)
	win := replDoc(t, id, false, `{"v":"b"}`, "2-bbb", "1-111")
	win.Attachments = map[string]*couchdoc.Attachment{"w.txt": {ContentType: "text/plain", Data: []byte("winner's"), RevPos: 2}}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{replDoc(t, id, false, `{"v":"x"}`, "1-111"), win, replDoc(t, id, false, `{"v":"a"}`, "2-aaa", "1-111")}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if l := leaves(t, db, id); len(l) != 2 {
		t.Fatalf("leaves %v", l)
	}
	return db
}

func liveLeaves(t *testing.T, db *localdb.DB, id string) []string {
	t.Helper()
	doc, err := db.Get(bg, id, localdb.GetOptions{Conflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{doc.Rev}, doc.Conflicts...)
}

func TestResolveConflictKeep(t *testing.T) {
	for _, keep := range []string{"", "2-bbb", "2-aaa"} {
		db := conflicted(t, "d")
		res, err := db.ResolveConflict(bg, "d", keep, nil)
		if err != nil {
			t.Fatalf("keep %q: %v", keep, err)
		}
		want, lost := keep, "2-aaa"
		if keep == "" || keep == "2-bbb" {
			want = "2-bbb"
		} else {
			lost = "2-bbb"
		}
		if res.Rev != want || !slices.Equal(res.Deleted, []string{lost}) {
			t.Fatalf("keep %q: %+v", keep, res)
		}
		if l := liveLeaves(t, db, "d"); !slices.Equal(l, []string{want}) {
			t.Fatalf("keep %q: live leaves %v", keep, l)
		}
	}
}

func TestResolveConflictMergeAttachments(t *testing.T) {
	// No _attachments: the kept leaf's attachments stay.
	db := conflicted(t, "d")
	res, err := db.ResolveConflict(bg, "d", "", &couchdoc.Doc{Body: []byte(`{"v":"merged"}`)})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := db.Get(bg, "d", localdb.GetOptions{Attachments: true, Conflicts: true})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != res.Rev || len(doc.Conflicts) != 0 || string(doc.Body) != `{"v":"merged"}` ||
		doc.Attachments["w.txt"] == nil || !bytes.Equal(doc.Attachments["w.txt"].Data, []byte("winner's")) {
		t.Fatalf("merge without _attachments: %+v", doc)
	}
	if g, _, _ := couchdoc.ParseRev(res.Rev); g != 3 {
		t.Fatalf("merge rev %s, want a child of 2-bbb", res.Rev)
	}

	// Listed _attachments: exactly those (here none, and a new one).
	db = conflicted(t, "d")
	merged := &couchdoc.Doc{Body: []byte(`{}`), Attachments: map[string]*couchdoc.Attachment{"n.txt": {ContentType: "text/plain", Data: []byte("new")}}}
	if _, err := db.ResolveConflict(bg, "d", "2-aaa", merged); err != nil {
		t.Fatal(err)
	}
	doc, _ = db.Get(bg, "d", localdb.GetOptions{Attachments: true})
	if len(doc.Attachments) != 1 || !bytes.Equal(doc.Attachments["n.txt"].Data, []byte("new")) {
		t.Fatalf("merge with _attachments: %+v", doc.Attachments)
	}
	db = conflicted(t, "d")
	if _, err := db.ResolveConflict(bg, "d", "", &couchdoc.Doc{Body: []byte(`{}`), Attachments: map[string]*couchdoc.Attachment{}}); err != nil {
		t.Fatal(err)
	}
	if doc, _ = db.Get(bg, "d", localdb.GetOptions{}); len(doc.Attachments) != 0 {
		t.Fatalf("merge with empty _attachments kept %v", doc.Attachments)
	}
}

// TestResolveConflictAtomic: a merge that fails leaves every leaf as it was.
func TestResolveConflictAtomic(t *testing.T) {
	db := conflicted(t, "d")
	bad := &couchdoc.Doc{Body: []byte(`{}`), Attachments: map[string]*couchdoc.Attachment{"gone.txt": {Stub: true}}}
	_, err := db.ResolveConflict(bg, "d", "2-aaa", bad) // 2-aaa has no gone.txt
	wantErr(t, err, couchdoc.ErrMissingStub)
	if l := liveLeaves(t, db, "d"); !slices.Equal(l, []string{"2-bbb", "2-aaa"}) {
		t.Fatalf("after a failed merge: live leaves %v", l)
	}
	_, err = db.ResolveConflict(bg, "d", "", &couchdoc.Doc{Body: []byte(`[1]`)})
	wantErr(t, err, couchdoc.ErrBadRequest)
	if l := liveLeaves(t, db, "d"); len(l) != 2 {
		t.Fatalf("after a bad body: live leaves %v", l)
	}
}

func TestResolveConflictErrors(t *testing.T) {
	db := conflicted(t, "d")
	_, err := db.ResolveConflict(bg, "d", "1-111", nil) // not a leaf
	wantErr(t, err, couchdoc.ErrNotFound)
	_, err = db.ResolveConflict(bg, "nope", "", nil)
	wantErr(t, err, couchdoc.ErrNotFound)
	put(t, db, "single", "", `{}`)
	_, err = db.ResolveConflict(bg, "single", "", &couchdoc.Doc{Body: []byte(`{"x":1}`)})
	if !errors.Is(err, localdb.ErrNoConflict) {
		t.Fatalf("single leaf: %v", err)
	}
	if doc, _ := db.Get(bg, "single", localdb.GetOptions{}); string(doc.Body) != `{}` {
		t.Fatalf("single leaf: the merge was written: %s", doc.Body)
	}
	if l := liveLeaves(t, db, "d"); len(l) != 2 {
		t.Fatalf("after errors: %v", l)
	}
}
