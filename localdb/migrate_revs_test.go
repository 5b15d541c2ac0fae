package localdb_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/revtree"
)

// TestUpgradeCanonicalRevs opens a version-9 file holding what the store
// took before rev ids were opaque: upper-case and 16-digit hex ids, and
// a winner picked by the ids' text. Version 10 rewrites them as CouchDB
// keeps them, the winner by CouchDB's order of ids, and the index
// follows the new winner.
func TestUpgradeCanonicalRevs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hexU := "ABCDEF0123456789ABCDEF0123456789"
	put(t, db, "_design/q", "", `{"language": "query", "views": {
	"side": {"map": {"fields": {"side": "asc"}, "partial_filter_selector": {}}, "reduce": "_count", "options": {"def": {"fields": ["side"]}}}}}`)
	repl(t, db, "up", false, `{"side":"up"}`, "1-"+strings.ToLower(hexU))
	repl(t, db, "sixteen", false, `{"side":"sixteen"}`, "2-30313233343536373839616263646566", "1-"+strings.ToLower(hexU))
	repl(t, db, "order", false, `{"side":"e0"}`, "2-e0000000000000000000000000000000", "1-root")
	repl(t, db, "order", false, `{"side":"f0"}`, "2-f0", "1-root")
	repl(t, db, "plain", false, `{"side":"plain"}`, "1-"+strings.Repeat("a", 32))
	db.Close()

	// Make it what the old code wrote.
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	spell := map[string]string{
		strings.ToLower(hexU):              hexU,
		"30313233343536373839616263646566": "0123456789abcdef",
	}
	rows, err := raw.Query("SELECT doc_id, tree FROM docs")
	if err != nil {
		t.Fatal(err)
	}
	trees := map[int64][]byte{}
	for rows.Next() {
		var id int64
		var enc []byte
		if err := rows.Scan(&id, &enc); err != nil {
			t.Fatal(err)
		}
		tr, err := revtree.Unmarshal(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tr.Nodes {
			if old, ok := spell[tr.Nodes[i].Hash]; ok {
				tr.Nodes[i].Hash = old
			}
		}
		trees[id] = tr.Marshal() // one node per generation here: still sorted
	}
	rows.Close()
	for id, enc := range trees {
		if _, err := raw.Exec("UPDATE docs SET tree = ? WHERE doc_id = ?", enc, id); err != nil {
			t.Fatal(err)
		}
	}
	for canon, old := range spell {
		for _, q := range []string{"UPDATE revs SET rev = replace(rev, ?, ?)", "UPDATE docs SET winner = replace(winner, ?, ?)"} {
			if _, err := raw.Exec(q, canon, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The old order: "f0" > "e000..." as text.
	if _, err := raw.Exec(`UPDATE docs SET winner = '2-f0' WHERE id = 'order'; PRAGMA user_version = 9`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for id, want := range map[string]string{
		"up":      "1-" + strings.ToLower(hexU),
		"sixteen": "2-30313233343536373839616263646566",
		"order":   "2-e0000000000000000000000000000000",
		"plain":   "1-" + strings.Repeat("a", 32),
	} {
		doc, err := db.Get(bg, id, localdb.GetOptions{Revs: true})
		if err != nil || doc.Rev != want {
			t.Fatalf("%s: %v %+v, want rev %s", id, err, doc, want)
		}
	}
	// Every old spelling finds its revision.
	diff, err := db.RevsDiff(bg, map[string][]string{"up": {"1-" + hexU}, "sixteen": {"2-0123456789abcdef", "1-" + hexU}})
	if err != nil || len(diff) != 0 {
		t.Fatalf("revs_diff %+v %v", diff, err)
	}
	var sides []string
	err = db.ScanIndex(bg, localdb.IndexScan{DDoc: "_design/q", Name: "side"}, func(row *localdb.IndexRow) (bool, error) {
		sides = append(sides, row.Doc.ID+"="+string(row.Doc.Body))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sides, " "); !strings.Contains(got, `order={"side":"e0"}`) || strings.Contains(got, "f0") {
		t.Fatalf("index rows %s", got)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}
