package localdb_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func TestPutGetUpdateDelete(t *testing.T) {
	db := open(t)
	r1 := put(t, db, "a", "", `{"x":1}`)
	if !strings.HasPrefix(r1, "1-") {
		t.Fatalf("rev %s", r1)
	}
	doc, err := db.Get(bg, "a", localdb.GetOptions{})
	if err != nil || doc.Rev != r1 || string(doc.Body) != `{"x":1}` {
		t.Fatalf("get: %+v %v", doc, err)
	}
	// Creating again without rev conflicts; a stale rev conflicts.
	_, err = db.Put(bg, &couchdoc.Doc{ID: "a", Body: json.RawMessage(`{}`)})
	wantErr(t, err, couchdoc.ErrConflict)
	r2 := put(t, db, "a", r1, `{"x":2}`)
	_, err = db.Put(bg, &couchdoc.Doc{ID: "a", Rev: r1, Body: json.RawMessage(`{}`)})
	wantErr(t, err, couchdoc.ErrConflict)
	r3, err := db.Delete(bg, "a", r2)
	if err != nil || !strings.HasPrefix(r3, "3-") {
		t.Fatalf("delete: %s %v", r3, err)
	}
	_, err = db.Get(bg, "a", localdb.GetOptions{})
	wantErr(t, err, couchdoc.ErrNotFound)
	var ce *couchdoc.Error
	if !asErr(err, &ce) || ce.Reason != "deleted" {
		t.Fatalf("reason: %v", err)
	}
	tomb, err := db.Get(bg, "a", localdb.GetOptions{Rev: r3})
	if err != nil || !tomb.Deleted {
		t.Fatalf("tombstone: %+v %v", tomb, err)
	}
	// Recreate extends the deleted leaf.
	r4 := put(t, db, "a", "", `{"x":4}`)
	if !strings.HasPrefix(r4, "4-") {
		t.Fatalf("recreate rev %s", r4)
	}
	info, err := db.Info(bg)
	if err != nil || info.DocCount != 1 || info.DocDelCount != 0 || info.UpdateSeq != 4 {
		t.Fatalf("info %+v %v", info, err)
	}
	_, err = db.Get(bg, "nope", localdb.GetOptions{})
	wantErr(t, err, couchdoc.ErrNotFound)
}

func TestDeterministicRevs(t *testing.T) {
	a, b := open(t), open(t)
	ra := put(t, a, "d", "", `{"b":1,"a":[1,2]}`)
	rb := put(t, b, "d", "", `{"a":[1,2], "b":1}`)
	if ra != rb {
		t.Fatalf("same edit gave %s and %s", ra, rb)
	}
}

func TestBadInput(t *testing.T) {
	db := open(t)
	for _, d := range []*couchdoc.Doc{
		{ID: "x", Body: json.RawMessage(`[1]`)},
		{ID: "x", Body: json.RawMessage(`{"a":`)},
		{ID: "x", Rev: "bad", Body: json.RawMessage(`{}`)},
	} {
		_, err := db.Put(bg, d)
		wantErr(t, err, couchdoc.ErrBadRequest)
	}
	// Ids CouchDB refuses, with its reasons (couch_doc:validate_docid).
	for id, reason := range map[string]string{
		"":         "Document id must not be empty",
		"_foo":     "Only reserved document ids may start with underscore.",
		"_design/": "Illegal document id `_design/`",
		"_local/":  "Illegal document id `_local/`",
		"a\xff":    "Document id must be valid UTF-8",
	} {
		_, err := db.Put(bg, &couchdoc.Doc{ID: id, Body: json.RawMessage(`{}`)})
		wantErr(t, err, couchdoc.ErrIllegalDocID)
		if err.Error() != "illegal_docid: "+reason {
			t.Errorf("Put(%q): %v, want reason %q", id, err, reason)
		}
		res, err := db.BulkDocs(bg, []*couchdoc.Doc{{ID: id, Body: json.RawMessage(`{}`)}}, true)
		if err != nil || len(res) != 1 || res[0].Error != "illegal_docid" || res[0].Reason != reason {
			t.Errorf("BulkDocs(%q): %+v %v", id, res, err)
		}
	}
	info, _ := db.Info(bg)
	if info.UpdateSeq != 0 {
		t.Fatalf("bad input changed the db: %+v", info)
	}
	r := put(t, db, "_design/x", "", `{}`)
	if r == "" {
		t.Fatal("design doc")
	}
}

func TestHugeGenerationRefused(t *testing.T) {
	db := open(t)
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{{ID: "a", Rev: "99999999999-a"}}, false)
	if err != nil || res[0].Error != "bad_request" {
		t.Fatalf("%+v %v", res, err)
	}
	// An edit naming it is an edit of a revision that cannot exist: a
	// conflict, as in CouchDB (its parse_rev takes any integer).
	_, err = db.Put(bg, &couchdoc.Doc{ID: "a", Rev: "99999999999-a"})
	wantErr(t, err, couchdoc.ErrConflict)
}
