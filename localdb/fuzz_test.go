package localdb_test

import (
	"path/filepath"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// FuzzBulkDocs feeds arbitrary JSON documents, as a replicator or a client
// would send them, to BulkDocs in both modes: whatever happens, the store's
// invariants hold, a local edit reported OK can be read back and a
// replicated revision reported OK is known.
func FuzzBulkDocs(f *testing.F) {
	for _, s := range []string{
		`{"_id":"a","_rev":"1-a","x":1}`,
		`{"_id":"a","_rev":"3-c","_revisions":{"start":3,"ids":["c","b","a"]}}`,
		`{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b"]},"_deleted":true}`,
		`{"_id":"a","_revisions":{"start":2,"ids":["b","a"]}}`,
		`{"_id":"a","_attachments":{"f":{"data":"aGk=","content_type":"text/plain"}}}`,
		`{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"_attachments":{"f":{"stub":true,"revpos":1}}}`,
		`{"_id":"_design/x","views":{}}`,
		`{"_id":"_local/x","v":1}`,
		`{"_id":"a","_rev":"2-b","_revisions":{"start":5,"ids":["b","a"]}}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	db, err := localdb.Open(filepath.Join(f.TempDir(), "fuzz.db"), &localdb.Options{RevsLimit: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	f.Fuzz(func(t *testing.T, data []byte, newEdits bool) {
		doc, err := couchdoc.ParseDoc(data)
		if err != nil {
			return
		}
		res, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, newEdits)
		if err != nil {
			t.Fatalf("BulkDocs: %v", err)
		}
		if r := res[0]; r.OK && !couchdoc.IsLocalID(doc.ID) {
			if newEdits {
				if _, err := db.Get(bg, doc.ID, localdb.GetOptions{Rev: r.Rev}); err != nil {
					t.Fatalf("OK result %+v but Get: %v", r, err)
				}
			} else if diff, err := db.RevsDiff(bg, map[string][]string{doc.ID: {r.Rev}}); err != nil || len(diff) != 0 {
				// Replicated: the rev is known (stored, or already there).
				t.Fatalf("OK result %+v but revs_diff %v %v", r, diff, err)
			}
		}
		if err := db.CheckInvariants(bg); err != nil {
			t.Fatal(err)
		}
	})
}
