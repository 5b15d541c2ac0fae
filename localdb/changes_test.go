package localdb_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func feed(t *testing.T, db *localdb.DB, opts localdb.ChangesOptions) ([]*localdb.Change, int64) {
	t.Helper()
	var out []*localdb.Change
	last, err := db.Changes(bg, opts, func(c *localdb.Change) error { out = append(out, c); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out, last
}

func ids(cs []*localdb.Change) string {
	s := ""
	for _, c := range cs {
		s += fmt.Sprintf("%s@%d ", c.ID, c.Seq)
	}
	return s
}

func TestChanges(t *testing.T) {
	db := open(t)
	ra := put(t, db, "a", "", `{"n":1}`)
	put(t, db, "b", "", `{"n":2}`)
	put(t, db, "a", ra, `{"n":3}`) // a moves to seq 3
	put(t, db, "_local/x", "", `{}`)
	repl(t, db, "c", false, `{}`, "1-a")
	repl(t, db, "c", false, `{}`, "1-b")
	cs, last := feed(t, db, localdb.ChangesOptions{})
	if got := ids(cs); got != "b@2 a@3 c@5 " || last != 5 {
		t.Fatalf("feed %q last %d", got, last)
	}
	if !reflect.DeepEqual(cs[2].Revs, []string{"1-b"}) {
		t.Fatalf("main_only revs %v", cs[2].Revs)
	}
	cs, _ = feed(t, db, localdb.ChangesOptions{AllDocs: true, Since: 3})
	if len(cs) != 1 || !reflect.DeepEqual(cs[0].Revs, []string{"1-b", "1-a"}) {
		t.Fatalf("all_docs %+v", cs)
	}
	cs, last = feed(t, db, localdb.ChangesOptions{Limit: 2})
	if ids(cs) != "b@2 a@3 " || last != 3 {
		t.Fatalf("limit %q %d", ids(cs), last)
	}
	cs, _ = feed(t, db, localdb.ChangesOptions{Descending: true, Limit: 2})
	if ids(cs) != "c@5 a@3 " {
		t.Fatalf("descending %q", ids(cs))
	}
	cs, last = feed(t, db, localdb.ChangesOptions{DocIDs: []string{"a", "zz"}})
	if ids(cs) != "a@3 " || last != 5 {
		t.Fatalf("doc_ids %q %d", ids(cs), last)
	}
	cs, _ = feed(t, db, localdb.ChangesOptions{IncludeDocs: true, Conflicts: true, Since: 4})
	if cs[0].Doc == nil || cs[0].Doc.Rev != "1-b" || !reflect.DeepEqual(cs[0].Doc.Conflicts, []string{"1-a"}) {
		t.Fatalf("include_docs %+v", cs[0].Doc)
	}
	cs, _ = feed(t, db, localdb.ChangesOptions{Filter: func(d *couchdoc.Doc) bool { return string(d.Body) == `{"n":2}` }})
	if ids(cs) != "b@2 " {
		t.Fatalf("filter %q", ids(cs))
	}
	db.Delete(bg, "b", leaves(t, db, "b")[0])
	cs, _ = feed(t, db, localdb.ChangesOptions{Since: 5})
	if len(cs) != 1 || !cs[0].Deleted || cs[0].ID != "b" {
		t.Fatalf("deleted row %+v", cs)
	}
}

func TestChangesPaging(t *testing.T) {
	db := open(t)
	var docs []*couchdoc.Doc
	for i := 0; i < 700; i++ {
		docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("d%04d", i), Rev: "1-a"})
	}
	if _, err := db.BulkDocs(bg, docs, false); err != nil {
		t.Fatal(err)
	}
	cs, last := feed(t, db, localdb.ChangesOptions{})
	if len(cs) != 700 || last != 700 {
		t.Fatalf("%d rows, last %d", len(cs), last)
	}
	for i, c := range cs {
		if c.Seq != int64(i+1) {
			t.Fatalf("row %d seq %d", i, c.Seq)
		}
	}
	cs, _ = feed(t, db, localdb.ChangesOptions{Descending: true})
	if len(cs) != 700 || cs[0].Seq != 700 || cs[699].Seq != 1 {
		t.Fatalf("descending %d rows", len(cs))
	}
}

func TestLocalDocs(t *testing.T) {
	db := open(t)
	r, err := db.PutLocal(bg, &couchdoc.Doc{ID: "_local/cp", Body: []byte(`{"seq":1}`)})
	if err != nil || r != "0-1" {
		t.Fatalf("put local %s %v", r, err)
	}
	_, err = db.PutLocal(bg, &couchdoc.Doc{ID: "_local/cp", Body: []byte(`{}`)})
	wantErr(t, err, couchdoc.ErrConflict)
	r, err = db.PutLocal(bg, &couchdoc.Doc{ID: "_local/cp", Rev: "0-1", Body: []byte(`{"seq":2}`)})
	if err != nil || r != "0-2" {
		t.Fatalf("update local %s %v", r, err)
	}
	d, err := db.GetLocal(bg, "_local/cp")
	if err != nil || d.Rev != "0-2" || string(d.Body) != `{"seq":2}` {
		t.Fatalf("get local %+v %v", d, err)
	}
	if d2, _ := db.Get(bg, "_local/cp", localdb.GetOptions{}); d2 == nil || d2.Rev != "0-2" {
		t.Fatal("Get of a local id")
	}
	info, _ := db.Info(bg)
	if info.DocCount != 0 || info.UpdateSeq != 0 {
		t.Fatalf("local doc counted: %+v", info)
	}
	wantErr(t, db.DeleteLocal(bg, "_local/cp", "0-1"), couchdoc.ErrConflict)
	if err := db.DeleteLocal(bg, "_local/cp", "0-2"); err != nil {
		t.Fatal(err)
	}
	_, err = db.GetLocal(bg, "_local/cp")
	wantErr(t, err, couchdoc.ErrNotFound)
}

func TestAllDocs(t *testing.T) {
	db := open(t)
	for _, id := range []string{"a", "b", "c", "d"} {
		put(t, db, id, "", `{}`)
	}
	db.Delete(bg, "c", leaves(t, db, "c")[0])
	put(t, db, "_local/z", "", `{}`)
	list := func(o localdb.AllDocsOptions) string {
		s := ""
		total, err := db.AllDocs(bg, o, func(r *localdb.AllDocsRow) error {
			s += r.ID
			if r.Deleted {
				s += "(deleted)"
			}
			if r.Error != "" {
				s += "(" + r.Error + ")"
			}
			if r.Doc != nil {
				s += "+"
			}
			s += " "
			return nil
		})
		if err != nil || total != 3 {
			t.Fatalf("all_docs total %d %v", total, err)
		}
		return s
	}
	for _, tc := range []struct {
		o    localdb.AllDocsOptions
		want string
	}{
		{localdb.AllDocsOptions{}, "a b d "},
		{localdb.AllDocsOptions{StartKey: "b"}, "b d "},
		{localdb.AllDocsOptions{EndKey: "b"}, "a b "},
		{localdb.AllDocsOptions{EndKey: "b", ExclusiveEnd: true}, "a "},
		{localdb.AllDocsOptions{Descending: true, Limit: 2}, "d b "},
		{localdb.AllDocsOptions{Skip: 1, IncludeDocs: true}, "b+ d+ "},
		{localdb.AllDocsOptions{Keys: []string{"d", "c", "x"}}, "d c(deleted) x(not_found) "},
	} {
		if got := list(tc.o); got != tc.want {
			t.Errorf("%+v: got %q want %q", tc.o, got, tc.want)
		}
	}
}
