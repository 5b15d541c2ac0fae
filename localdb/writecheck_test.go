package localdb_test

import (
	"context"
	"encoding/json"
	"strings"
	gosync "sync"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// refuseCheck refuses documents whose body has "bad", and tombstones of
// ids starting with "keep", as a validate_doc_update would; it records
// the writes it saw.
type refuseCheck struct {
	mu   gosync.Mutex
	seen []string // id, with "!" for newEdits false
}

func (c *refuseCheck) CheckWrite(_ context.Context, _ *localdb.DB, doc *couchdoc.Doc, newEdits bool) error {
	c.mu.Lock()
	mark := ""
	if !newEdits {
		mark = "!"
	}
	c.seen = append(c.seen, doc.ID+mark)
	c.mu.Unlock()
	var body map[string]any
	_ = json.Unmarshal(doc.Body, &body)
	if _, bad := body["bad"]; bad {
		return couchdoc.Errorf(couchdoc.ErrForbidden, "bad %s", doc.ID)
	}
	if doc.Deleted && strings.HasPrefix(doc.ID, "keep") {
		return couchdoc.Errorf(couchdoc.ErrUnauthorized, "keep %s", doc.ID)
	}
	return nil
}

func missing(t *testing.T, db *localdb.DB, id string) {
	t.Helper()
	if _, err := db.Get(bg, id, localdb.GetOptions{}); !errorsIsNotFound(err) {
		t.Fatalf("%s was written (Get: %v)", id, err)
	}
}

func errorsIsNotFound(err error) bool { return couchdoc.StatusOf(err) == 404 }

// TestWriteCheckEveryPath: with a write check on, every write path of
// the store refuses what the check refuses, writes nothing of it, and
// writes the rest; off, nothing is checked.
func TestWriteCheckEveryPath(t *testing.T) {
	db := open(t)
	c := &refuseCheck{}
	db.SetWriteCheck(c)

	// Put, with and without an attachment.
	_, err := db.Put(bg, &couchdoc.Doc{ID: "p1", Body: json.RawMessage(`{"bad":1}`)})
	wantErr(t, err, couchdoc.ErrForbidden)
	missing(t, db, "p1")
	_, err = db.Put(bg, &couchdoc.Doc{ID: "p2", Body: json.RawMessage(`{"bad":1}`),
		Attachments: map[string]*couchdoc.Attachment{"a.txt": {Name: "a.txt", ContentType: "text/plain", Data: []byte("hi")}}})
	wantErr(t, err, couchdoc.ErrForbidden)
	missing(t, db, "p2")
	keep := put(t, db, "keep1", "", `{}`)

	// Delete.
	_, err = db.Delete(bg, "keep1", keep)
	wantErr(t, err, couchdoc.ErrUnauthorized)
	if got := leaves(t, db, "keep1"); len(got) != 1 || got[0] != keep {
		t.Fatalf("keep1's leaves after a refused delete: %v", got)
	}

	// BulkDocs, new_edits true: per document.
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{
		{ID: "b1", Body: json.RawMessage(`{}`)},
		{ID: "b2", Body: json.RawMessage(`{"bad":true}`)},
		{ID: "b3", Body: json.RawMessage(`{}`)},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err() != nil || res[2].Err() != nil || res[1].Error != "forbidden" || res[1].Reason != "bad b2" || res[1].ID != "b2" {
		t.Fatalf("bulk results: %+v", res)
	}
	missing(t, db, "b2")
	for _, id := range []string{"b1", "b3"} {
		if _, err := db.Get(bg, id, localdb.GetOptions{}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}

	// BulkDocs, new_edits false (replicated): two revisions of one
	// document, the refused one left out, the other written.
	res, err = db.BulkDocs(bg, []*couchdoc.Doc{
		replDoc(t, "r1", false, `{"bad":true}`, "2-bb", "1-aa"),
		replDoc(t, "r1", false, `{}`, "2-cc", "1-aa"),
		replDoc(t, "r2", false, `{"bad":true}`, "1-dd"),
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Error != "forbidden" || res[1].Err() != nil || res[2].Error != "forbidden" {
		t.Fatalf("replicated results: %+v", res)
	}
	if got := leaves(t, db, "r1"); len(got) != 1 || got[0] != "2-cc" {
		t.Fatalf("r1's leaves: %v", got)
	}
	missing(t, db, "r2")

	// Batch: the refusal is the call's error, the batch goes on.
	err = db.Batch(bg, func(b *localdb.Batch) error {
		_, err := b.Put(&couchdoc.Doc{ID: "t1", Body: json.RawMessage(`{"bad":1}`)})
		wantErr(t, err, couchdoc.ErrForbidden)
		_, err = b.Put(&couchdoc.Doc{ID: "t2", Body: json.RawMessage(`{}`)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	missing(t, db, "t1")
	if _, err := db.Get(bg, "t2", localdb.GetOptions{}); err != nil {
		t.Fatal(err)
	}

	// ResolveConflict: a refused deletion of a losing leaf writes
	// nothing.
	repl(t, db, "keep2", false, `{}`, "1-aa")
	repl(t, db, "keep2", false, `{}`, "1-bb")
	if _, err := db.ResolveConflict(bg, "keep2", "", nil); couchdoc.StatusOf(err) != 401 {
		t.Fatalf("resolve: %v", err)
	}
	if got := leaves(t, db, "keep2"); len(got) != 2 {
		t.Fatalf("keep2's leaves after a refused resolution: %v", got)
	}

	// _local documents are not checked.
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "_local/x", Body: json.RawMessage(`{"bad":1}`)}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	for _, id := range c.seen {
		if strings.HasPrefix(id, "_local/") {
			t.Errorf("the check saw %s", id)
		}
	}
	c.mu.Unlock()

	// Off: nothing is checked.
	db.SetWriteCheck(nil)
	put(t, db, "p1", "", `{"bad":1}`)
}
