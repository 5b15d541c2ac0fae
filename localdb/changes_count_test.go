package localdb_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPendingChangesRemembered asks PendingChanges the way feed readers do
// (forward in steps, backwards, from several feeds at once) between writes,
// updates and purges, and compares every answer with the documents the
// feed lists after that seq: the answers it remembers must never outlive
// the state they were counted in.
func TestPendingChangesRemembered(t *testing.T) {
	db := open(t)
	rng := rand.New(rand.NewPCG(1, 2))
	revs := map[string]string{}
	write := func(n int) {
		for range n {
			id := fmt.Sprintf("d%03d", rng.IntN(300))
			revs[id] = put(t, db, id, revs[id], `{"v":1}`)
		}
	}
	// The feed as it stands, read again after each change of the store
	// (only reads run between two changes).
	var feed map[string]int64
	reread := func() { feed = feedSeqs(t, db) }
	check := func(seq int64) {
		t.Helper()
		got, err := db.PendingChanges(bg, seq)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, s := range feed {
			if s > seq {
				want++
			}
		}
		if got != want {
			t.Fatalf("PendingChanges(%d) = %d, want %d", seq, got, want)
		}
	}
	for round := range 12 {
		write(80)
		reread()
		top := updateSeq(t, db)
		// A feed read in batches, another one behind it, and a step back.
		for s := int64(0); s <= top+3; s += 17 {
			check(s)
			check(s / 2)
		}
		check(top / 3)
		check(top)
		switch round % 3 {
		case 0: // purge a few documents whole
			req := map[string][]string{}
			for id, rev := range revs {
				if len(req) == 3 {
					break
				}
				req[id] = []string{rev}
				delete(revs, id)
			}
			if _, err := db.Purge(bg, req); err != nil {
				t.Fatal(err)
			}
		case 1: // delete some
			for id, rev := range revs {
				if rng.IntN(10) == 0 {
					if _, err := db.Delete(bg, id, rev); err != nil {
						t.Fatal(err)
					}
					delete(revs, id)
				}
			}
		}
		// The same seqs again, after the store changed.
		reread()
		for s := int64(0); s <= top; s += 17 {
			check(s)
		}
	}
}
