package localdb_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// TestReplicationOrderIndependent writes the full histories of random
// revision trees with new_edits=false, in two random orders and batchings,
// into two stores: both must end with the same leaves, winner, conflicts
// and revs_diff answers, and every rev of the tree must be known.
// (Stemmed histories are not order independent in CouchDB: a revision it
// has is ignored with its history.) Invariants are checked at cleanup.
func TestReplicationOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	a, b := open(t), open(t)
	var all []*couchdoc.Doc
	known := map[string][]string{}
	for d := 0; d < 30; d++ {
		id := fmt.Sprintf("doc%02d", d)
		type node struct {
			gen    int
			hash   string
			parent int
		}
		var nodes []node
		for i := 0; i < 1+rng.Intn(10); i++ {
			p := -1
			if i > 0 {
				p = rng.Intn(i)
			}
			gen := 1
			if p >= 0 {
				gen = nodes[p].gen + 1
			}
			nodes = append(nodes, node{gen, fmt.Sprintf("%x", rng.Int63()), p})
		}
		for i, n := range nodes {
			var hist []string
			for j := i; j >= 0; j = nodes[j].parent {
				hist = append(hist, fmt.Sprintf("%d-%s", nodes[j].gen, nodes[j].hash))
			}
			all = append(all, replDoc(t, id, rng.Intn(4) == 0, fmt.Sprintf(`{"n":%d}`, i), hist...))
			known[id] = append(known[id], fmt.Sprintf("%d-%s", n.gen, n.hash))
		}
	}
	write := func(db *localdb.DB, docs []*couchdoc.Doc) {
		for len(docs) > 0 {
			n := min(len(docs), 1+rng.Intn(20))
			res, err := db.BulkDocs(bg, docs[:n], false)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if !r.OK {
					t.Fatalf("%+v", r)
				}
			}
			docs = docs[n:]
		}
	}
	shuffled := func() []*couchdoc.Doc {
		out := append([]*couchdoc.Doc(nil), all...)
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out
	}
	write(a, shuffled())
	write(b, shuffled())
	write(b, shuffled()) // everything again: no change
	for id, revs := range known {
		la, lb := leaves(t, a, id), leaves(t, b, id)
		if !reflect.DeepEqual(la, lb) {
			t.Fatalf("%s: leaves %v vs %v", id, la, lb)
		}
		opts := localdb.GetOptions{Conflicts: true, DeletedConflicts: true}
		da, errA := a.Get(bg, id, opts)
		db, errB := b.Get(bg, id, opts)
		if (errA == nil) != (errB == nil) || (errA == nil && !reflect.DeepEqual(da, db)) {
			t.Fatalf("%s: winner %+v %v vs %+v %v", id, da, errA, db, errB)
		}
		diff, err := a.RevsDiff(bg, map[string][]string{id: revs})
		if err != nil || len(diff) != 0 {
			t.Fatalf("%s: revs_diff of its own revs %+v %v", id, diff, err)
		}
	}
	ia, _ := a.Info(bg)
	ib, _ := b.Info(bg)
	if ia.DocCount != ib.DocCount || ia.DocDelCount != ib.DocDelCount {
		t.Fatalf("info %+v vs %+v", ia, ib)
	}
}
