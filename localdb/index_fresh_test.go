package localdb_test

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// freshDesign defines two json indexes as CouchDB stores them.
const freshDesign = `{"language": "query", "views": {
	"n": {"map": {"fields": {"n": "asc"}, "partial_filter_selector": {}}, "reduce": "_count", "options": {"def": {"fields": ["n"]}}},
	"s-n": {"map": {"fields": {"s": "asc", "n": "asc"}, "partial_filter_selector": {}}, "reduce": "_count", "options": {"def": {"fields": ["s", "n"]}}}}}`

// TestFreshEntriesMerge writes a random history (batches of new, updated,
// deleted, replicated and purged documents) with a merge limit so low that
// entries keep moving from mango_fresh to mango_entries, while others stay
// fresh: after every batch the entries are exactly the documents' keys,
// each in one table (CheckInvariants), and a scan, paged three rows at a
// time, in either direction and from a bookmark, returns them all in key
// order, whichever table holds each.
func TestFreshEntriesMerge(t *testing.T) {
	defer localdb.SetFreshLimit(40)()
	db := open(t)
	put(t, db, "_design/q", "", freshDesign)
	r := rand.New(rand.NewSource(8))
	body := func() string {
		m := map[string]any{"n": r.Intn(12)}
		if r.Intn(4) > 0 {
			m["s"] = string(rune('a' + r.Intn(5)))
		}
		if r.Intn(8) == 0 {
			delete(m, "n")
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	var sawFresh, sawMerge bool
	lastFresh := int64(0)
	for step := 0; step < 150; step++ {
		var batch []*couchdoc.Doc
		seen := map[string]bool{}
		for i := 1 + r.Intn(25); i > 0; i-- {
			id := fmt.Sprintf("d%03d", r.Intn(120))
			if seen[id] {
				continue
			}
			seen[id] = true
			doc := &couchdoc.Doc{ID: id, Body: json.RawMessage(body())}
			if cur, err := db.Get(bg, id, localdb.GetOptions{}); err == nil {
				doc.Rev = cur.Rev
				doc.Deleted = r.Intn(5) == 0
			}
			batch = append(batch, doc)
		}
		if _, err := db.BulkDocs(bg, batch, true); err != nil {
			t.Fatal(err)
		}
		switch r.Intn(6) {
		case 0: // a replicated branch that may win
			id := fmt.Sprintf("d%03d", r.Intn(120))
			h := md5.Sum([]byte(fmt.Sprint(step)))
			hash := hex.EncodeToString(h[:])
			gen := 1 + r.Intn(6)
			repl(t, db, id, r.Intn(5) == 0, body(), fmt.Sprintf("%d-%s", gen, hash))
		case 1: // purge a document's every leaf
			id := fmt.Sprintf("d%03d", r.Intn(120))
			if leaves, err := db.OpenRevs(bg, id, nil, localdb.GetOptions{}); err == nil && len(leaves) > 0 {
				var revs []string
				for _, l := range leaves {
					revs = append(revs, l.Doc.Rev)
				}
				if _, err := db.Purge(bg, map[string][]string{id: revs}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := db.CheckInvariants(bg); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		fresh, entries, err := db.FreshRows(bg)
		if err != nil {
			t.Fatal(err)
		}
		sawFresh = sawFresh || fresh > 0 && entries > 0
		sawMerge = sawMerge || fresh < lastFresh && entries > 0
		lastFresh = fresh
		total := checkScans(t, db, "n") + checkScans(t, db, "s-n")
		if total != int(fresh+entries) {
			t.Fatalf("step %d: scans return %d entries, the tables hold %d + %d", step, total, fresh, entries)
		}
	}
	if !sawFresh || !sawMerge {
		t.Fatalf("the history never had entries in both tables (%v) or never merged (%v)", sawFresh, sawMerge)
	}
}

// checkScans scans index name both ways, three rows per page, and from the
// middle key on, and returns its row count.
func checkScans(t *testing.T, db *localdb.DB, name string) int {
	t.Helper()
	scan := func(s localdb.IndexScan) (keys [][]byte, ids []string) {
		s.DDoc, s.Name, s.PageSize = "_design/q", name, 3
		err := db.ScanIndex(bg, s, func(row *localdb.IndexRow) (bool, error) {
			keys = append(keys, bytes.Clone(row.Key))
			ids = append(ids, row.Doc.ID)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return keys, ids
	}
	asc, ascIDs := scan(localdb.IndexScan{})
	desc, _ := scan(localdb.IndexScan{Descending: true})
	if len(asc) != len(desc) {
		t.Fatalf("index %s: %d rows ascending, %d descending", name, len(asc), len(desc))
	}
	for i := range asc {
		if i > 0 && bytes.Compare(asc[i-1], asc[i]) >= 0 {
			t.Fatalf("index %s: keys out of order at row %d", name, i)
		}
		if !bytes.Equal(asc[i], desc[len(desc)-1-i]) {
			t.Fatalf("index %s: row %d differs between directions", name, i)
		}
		if !bytes.HasSuffix(asc[i], append([]byte{0}, ascIDs[i]...)) {
			t.Fatalf("index %s: row %d is %s under key %x", name, i, ascIDs[i], asc[i])
		}
	}
	if len(asc) > 2 {
		mid := len(asc) / 2
		tail, _ := scan(localdb.IndexScan{After: asc[mid]})
		if len(tail) != len(asc)-mid-1 || !bytes.Equal(tail[0], asc[mid+1]) {
			t.Fatalf("index %s: %d rows after the middle key, want %d", name, len(tail), len(asc)-mid-1)
		}
	}
	return len(asc)
}

// TestMergeFreshRowWins checks the merge when an entry is in both tables,
// which the write path never leaves but the merge must survive: the fresh
// row, the newer, replaces the other, as before the merge ignored
// conflicts (CheckInvariants compares each entry's revision row with its
// document's winner).
func TestMergeFreshRowWins(t *testing.T) {
	defer localdb.SetFreshLimit(4)()
	db := open(t)
	put(t, db, "_design/q", "", freshDesign)
	put(t, db, "a", "", `{"n": 1, "s": "x"}`)
	n, err := db.CopyFreshToEntries(bg)
	if err != nil || n != 2 {
		t.Fatalf("copied %d entries: %v", n, err)
	}
	if err := db.CheckInvariants(bg); err == nil {
		t.Fatal("CheckInvariants passes with stale entries in mango_entries")
	}
	put(t, db, "b", "", `{"n": 2, "s": "y"}`)
	put(t, db, "c", "", `{"n": 3, "s": "z"}`)
	fresh, entries, err := db.FreshRows(bg)
	if err != nil || fresh != 0 || entries != 6 {
		t.Fatalf("after the merge: %d fresh rows, %d entries (%v), want 0 and 6", fresh, entries, err)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}
