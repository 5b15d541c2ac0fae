package localdb_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// A document refused half way through its attachments (inside its
// savepoint) leaves no trace, and the documents around it in the same batch
// are written whole, counted and sequenced as if it had never been there.
func TestRefusedDocInBatchLeavesNoTrace(t *testing.T) {
	for _, newEdits := range []bool{false, true} {
		db := open(t)
		doc := func(id string, atts map[string]*couchdoc.Attachment) *couchdoc.Doc {
			d := &couchdoc.Doc{ID: id, Body: json.RawMessage(`{"v":1}`), Attachments: atts}
			if !newEdits {
				d.Rev = "1-" + "abcdef0123456789abcdef0123456789"
				d.Revisions = &couchdoc.Revisions{Start: 1, IDs: []string{"abcdef0123456789abcdef0123456789"}}
			}
			return d
		}
		bad := map[string]*couchdoc.Attachment{
			"ok.txt":   {Name: "ok.txt", ContentType: "text/plain", Data: []byte("some bytes")},
			"gone.txt": {Name: "gone.txt", ContentType: "text/plain", Stub: true, Digest: "md5-AAAAAAAAAAAAAAAAAAAAAA==", Length: 3, RevPos: 1},
		}
		batch := []*couchdoc.Doc{doc("a", nil), doc("b", bad), doc("c", nil)}
		res, err := db.BulkDocs(bg, batch, newEdits)
		if err != nil {
			t.Fatalf("new_edits=%v: %v", newEdits, err)
		}
		if res[0].Err() != nil || res[2].Err() != nil {
			t.Fatalf("new_edits=%v: good docs refused: %+v", newEdits, res)
		}
		if !errors.Is(res[1].Err(), couchdoc.ErrMissingStub) {
			t.Fatalf("new_edits=%v: bad doc: got %v, want missing_stub", newEdits, res[1].Err())
		}
		if _, err := db.Get(bg, "b", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
			t.Fatalf("new_edits=%v: refused doc readable: %v", newEdits, err)
		}
		info, err := db.Info(bg)
		if err != nil {
			t.Fatal(err)
		}
		if info.DocCount != 2 || info.UpdateSeq != 2 {
			t.Fatalf("new_edits=%v: doc_count %d update_seq %d, want 2 and 2", newEdits, info.DocCount, info.UpdateSeq)
		}
		var ids []string
		if _, err := db.Changes(bg, localdb.ChangesOptions{}, func(c *localdb.Change) error {
			ids = append(ids, c.ID)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 2 || ids[0] != "a" || ids[1] != "c" {
			t.Fatalf("new_edits=%v: feed %v, want [a c]", newEdits, ids)
		}
	}
}
