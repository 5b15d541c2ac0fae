package query_test

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

// TestIndexesConsistentUnderRandomHistory applies random local edits,
// deletions, replicated branches (conflicts whose winner changes either
// way), design doc changes and compactions, with revs limit 1 so
// replaced winners are stemmed at once, and checks every index against the
// documents (CheckInvariants) after each step.
func TestIndexesConsistentUnderRandomHistory(t *testing.T) {
	db := localdbtest.OpenWith(t, &localdb.Options{RevsLimit: 1})
	r := rand.New(rand.NewSource(3))
	createIndex(t, db, `{"index": {"fields": ["n"]}, "ddoc": "a", "name": "n"}`)
	createIndex(t, db, `{"index": {"fields": ["s", "n"]}, "ddoc": "a", "name": "s-n"}`)
	body := func() json.RawMessage {
		b, _ := json.Marshal(randDocBody(r))
		return b
	}
	for step := 0; step < 400; step++ {
		id := fmt.Sprintf("d%02d", r.Intn(30))
		cur, err := db.Get(bg, id, localdb.GetOptions{})
		live := err == nil
		switch k := r.Intn(10); {
		case k < 4:
			rev := ""
			if live {
				rev = cur.Rev
			}
			if _, err := db.Put(bg, &couchdoc.Doc{ID: id, Rev: rev, Body: body()}); err != nil {
				t.Fatal(err)
			}
		case k < 5 && live:
			if _, err := db.Delete(bg, id, cur.Rev); err != nil {
				t.Fatal(err)
			}
		case k < 8:
			// A replicated branch: a high generation wins, a low one loses.
			gen := 1 + r.Intn(8)
			h := md5.Sum([]byte(fmt.Sprint(step)))
			hash := hex.EncodeToString(h[:])
			doc := &couchdoc.Doc{ID: id, Rev: fmt.Sprintf("%d-%s", gen, hash), Body: body(), Deleted: r.Intn(6) == 0,
				Revisions: &couchdoc.Revisions{Start: gen, IDs: []string{hash}}}
			if _, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, false); err != nil {
				t.Fatal(err)
			}
		case k < 9:
			// Delete the winning leaf of a conflicted document: a losing
			// leaf, already stored, becomes the winner.
			if live {
				if _, err := db.Delete(bg, id, cur.Rev); err != nil {
					t.Fatal(err)
				}
			}
		default:
			switch r.Intn(4) {
			case 0:
				if err := db.Compact(bg); err != nil {
					t.Fatal(err)
				}
			case 3:
				purgeSome(t, db, r, id)
			case 1:
				createIndex(t, db, fmt.Sprintf(`{"index": {"fields": ["o.x"], "partial_filter_selector": {"t": "a"}}, "ddoc": "b", "name": "ox%d"}`, r.Intn(3)))
			default:
				_ = deleteIndexIfAny(db)
			}
		}
		if err := db.CheckInvariants(bg); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	if len(db.Indexes()) < 2 {
		t.Fatalf("indexes lost: %v", db.Indexes())
	}
}

// purgeSome purges the winning leaf of id, or every leaf, or a random
// one: the winner changes to a stored loser, or the document goes.
func purgeSome(t *testing.T, db *localdb.DB, r *rand.Rand, id string) {
	t.Helper()
	leaves, err := db.OpenRevs(bg, id, nil, localdb.GetOptions{})
	if err != nil || len(leaves) == 0 {
		return
	}
	var revs []string
	switch r.Intn(3) {
	case 0:
		revs = []string{leaves[0].Doc.Rev}
	case 1:
		for _, l := range leaves {
			revs = append(revs, l.Doc.Rev)
		}
	default:
		revs = []string{leaves[r.Intn(len(leaves))].Doc.Rev}
	}
	if _, err := db.Purge(bg, map[string][]string{id: revs}); err != nil {
		t.Fatal(err)
	}
}

func deleteIndexIfAny(db *localdb.DB) error {
	for _, ix := range db.Indexes() {
		if ix.DDoc == "_design/b" {
			return deleteIndex(db, ix.DDoc, ix.Name)
		}
	}
	return nil
}
