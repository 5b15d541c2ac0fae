package synctest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
)

// leafRev is one leaf of a document as a peer answers it, its rev ids in
// the form CouchDB keeps them (couchdoc.CanonRev).
type leafRev struct {
	Rev     string
	Deleted bool
	IDs     string // _revisions ids, newest first, joined by "|"
	Body    string // the leaf's "b" member
}

// revDoc is a generated document: its leaves with their histories.
type revDoc struct {
	id     string
	leaves []leafRev
	seed   []map[string]any // the _bulk_docs entries that make it, rev ids as generated
}

// randRevID makes a revision id of one of the shapes CouchDB takes: 32
// hex digits (lower or upper case), 64 hex digits, short words, the empty
// id, 16 bytes (which CouchDB prints as hex), long printable strings.
// With plain set, ids hold no '-' and none is empty (see Caps.AnyRevID).
func randRevID(rng *rand.Rand, plain bool) string {
	const hexd, upper = "0123456789abcdef", "0123456789ABCDEF"
	pick := func(alpha string, n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alpha[rng.IntN(len(alpha))])
		}
		return b.String()
	}
	var s string
	switch rng.IntN(8) {
	case 0, 1:
		return pick(hexd, 32)
	case 2:
		return pick(upper, 32)
	case 3:
		return pick(hexd+upper, 64)
	case 4:
		s = pick("abcdefghijklmnopqrstuvwxyz0123456789", 1+rng.IntN(10))
	case 5:
		if !plain {
			return ""
		}
		s = pick("abcdefghijklmnopqrstuvwxyz", 3)
	case 6:
		return pick("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 16)
	default:
		alpha := "abcXYZ0189-_.+ ~"
		if plain {
			alpha = "abcXYZ0189_.+ ~"
		}
		s = pick(alpha, 17+rng.IntN(120)) + []string{"", "\u00e9", "\u6771"}[rng.IntN(3)]
	}
	if len(s) == 32 { // CouchDB refuses 32 bytes that are not hex
		s += "x"
	}
	return s
}

// genRevDocs makes n documents, each with one to three branches sharing a
// trunk, some leaves deleted, every rev id random (distinct within a
// document once canonical).
func genRevDocs(rng *rand.Rand, n int, plain bool) []revDoc {
	docs := make([]revDoc, n)
	for i := range docs {
		d := &docs[i]
		d.id = fmt.Sprintf("rv-%03d", i)
		used := map[string]bool{}
		fresh := func(gen int) (raw, canon string) {
			for {
				raw = randRevID(rng, plain)
				c, ok := couchdoc.CanonRevID(raw)
				if !ok {
					panic("randRevID made an id CouchDB refuses: " + raw)
				}
				if key := strconv.Itoa(gen) + "-" + c; !used[key] {
					used[key] = true
					return raw, c
				}
			}
		}
		trunkLen := 1 + rng.IntN(4)
		var trunkRaw, trunkCanon []string // oldest first
		for g := 1; g <= trunkLen; g++ {
			r, c := fresh(g)
			trunkRaw, trunkCanon = append(trunkRaw, r), append(trunkCanon, c)
		}
		for b := range 1 + rng.IntN(3) {
			cut := rng.IntN(trunkLen) + 1 // shares trunk[:cut]
			if b == 0 {
				cut = trunkLen // the trunk's own leaf
			}
			raw, canon := slices.Clone(trunkRaw[:cut]), slices.Clone(trunkCanon[:cut])
			for range 1 + rng.IntN(3) {
				r, c := fresh(len(raw) + 1)
				raw, canon = append(raw, r), append(canon, c)
			}
			slices.Reverse(raw)
			slices.Reverse(canon)
			gen := len(raw)
			deleted := rng.IntN(5) == 0
			body := fmt.Sprintf("%d.%d", i, b)
			entry := map[string]any{
				"_id": d.id, "_rev": strconv.Itoa(gen) + "-" + raw[0], "b": body,
				"_revisions": map[string]any{"start": gen, "ids": raw},
			}
			if deleted {
				entry["_deleted"] = true
			}
			d.seed = append(d.seed, entry)
			if deleted {
				body = "<nil>" // a tombstone's body is not compared
			}
			d.leaves = append(d.leaves, leafRev{Rev: strconv.Itoa(gen) + "-" + canon[0], Deleted: deleted, IDs: strings.Join(canon, "|"), Body: body})
		}
		// A branch that became an ancestor of a later one is no leaf.
		var kept []leafRev
		for _, l := range d.leaves {
			inner := false
			for _, o := range d.leaves {
				if o.Rev != l.Rev && strings.HasSuffix(o.IDs, "|"+l.IDs) {
					inner = true
				}
			}
			if !inner {
				kept = append(kept, l)
			}
		}
		d.leaves = kept
		sortLeaves(d.leaves)
	}
	return docs
}

// sortLeaves orders leaves as CouchDB picks its winner: live first, then
// the higher generation, then the higher rev id (couchdoc.CompareRevIDs).
func sortLeaves(ls []leafRev) {
	slices.SortFunc(ls, func(a, b leafRev) int {
		if a.Deleted != b.Deleted {
			if a.Deleted {
				return 1
			}
			return -1
		}
		ga, ha, _ := couchdoc.ParseRev(a.Rev)
		gb, hb, _ := couchdoc.ParseRev(b.Rev)
		if ga != gb {
			return gb - ga
		}
		return -couchdoc.CompareRevIDs(ha, hb)
	})
}

// canonLeaf reads one open_revs document as a leafRev.
func canonLeaf(t testing.TB, d map[string]any) leafRev {
	t.Helper()
	rev, err := couchdoc.CanonRev(fmt.Sprint(d["_rev"]))
	if err != nil {
		t.Fatalf("leaf %v: %v", d, err)
	}
	l := leafRev{Rev: rev, Deleted: d["_deleted"] == true, Body: fmt.Sprint(d["b"])}
	if l.Deleted {
		l.Body = "<nil>" // a tombstone's body is not replicated by every peer
	}
	if revs, ok := d["_revisions"].(map[string]any); ok {
		var ids []string
		for _, x := range revs["ids"].([]any) {
			c, ok := couchdoc.CanonRevID(x.(string))
			if !ok {
				t.Fatalf("leaf %v: bad id %q", d, x)
			}
			ids = append(ids, c)
		}
		l.IDs = strings.Join(ids, "|")
	}
	return l
}

// remoteLeaves reads a document's leaves from a remote (open_revs=all,
// revs=true) and its winner (_all_docs, which names a deleted one too).
func remoteLeaves(t testing.TB, dbURL, id string) ([]leafRev, string) {
	t.Helper()
	var rows []struct {
		OK map[string]any `json:"ok"`
	}
	if st := testutil.DoJSON(context.Background(), t, "GET", dbURL+"/"+wire.EscapeDocID(id)+"?open_revs=all&revs=true", nil, &rows); st != 200 {
		t.Fatalf("open_revs of %s: %d", id, st)
	}
	var out []leafRev
	for _, r := range rows {
		out = append(out, canonLeaf(t, r.OK))
	}
	var all struct {
		Rows []struct {
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
		} `json:"rows"`
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", dbURL+"/_all_docs", map[string]any{"keys": []string{id}}, &all); st != 200 || len(all.Rows) != 1 {
		t.Fatalf("_all_docs of %s: %d %+v", id, st, all)
	}
	win, err := couchdoc.CanonRev(all.Rows[0].Value.Rev)
	if err != nil {
		t.Fatalf("winner of %s: %v", id, err)
	}
	return out, win
}

// storeLeaves reads a document's leaves from the store, the winner first.
func storeLeaves(t testing.TB, db *localdb.DB, id string) []leafRev {
	t.Helper()
	ors, err := db.OpenRevs(context.Background(), id, nil, localdb.GetOptions{Revs: true})
	if err != nil {
		t.Fatalf("open_revs of %s: %v", id, err)
	}
	var out []leafRev
	for _, o := range ors {
		if o.Doc == nil {
			t.Fatalf("open_revs of %s: missing %s", id, o.Missing)
		}
		d := o.Doc
		l := leafRev{Rev: d.Rev, Deleted: d.Deleted, IDs: strings.Join(d.Revisions.IDs, "|"), Body: "<nil>"}
		if !d.Deleted {
			var m map[string]any
			if err := json.Unmarshal(d.Body, &m); err != nil {
				t.Fatal(err)
			}
			l.Body = fmt.Sprint(m["b"])
		}
		out = append(out, l)
	}
	return out
}

func sameLeafSet(a, b []leafRev) bool {
	key := func(ls []leafRev) []string {
		var k []string
		for _, l := range ls {
			k = append(k, fmt.Sprintf("%s %t %s %s", l.Rev, l.Deleted, l.IDs, l.Body))
		}
		slices.Sort(k)
		return k
	}
	return slices.Equal(key(a), key(b))
}

// testRevIDs is the property test of opaque revision ids: random
// documents whose rev ids have every shape CouchDB takes are seeded on a
// remote with new_edits=false, pulled into a store and pushed to a second
// remote, and come out unchanged everywhere: the same leaves with the
// same histories and bodies, in the form CouchDB keeps rev ids, and the
// winner CouchDB picks (in the store, and on remotes whose caps say they
// pick it as CouchDB does: pouchdb-server compares rev ids as strings).
// Ids hold '-' and may be empty only on remotes that keep such ids
// (Caps.AnyRevID).
// SETTEE_REVIDS_SEED replays a seed.
func testRevIDs(t *testing.T, newDB Factory, caps Caps) {
	seed := uint64(rand.Int64())
	if s := os.Getenv("SETTEE_REVIDS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (SETTEE_REVIDS_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, 27))
	docs := genRevDocs(rng, 40, !caps.AnyRevID)
	src := newDB(t)
	var seedDocs []any
	for _, d := range docs {
		for _, e := range d.seed {
			seedDocs = append(seedDocs, e)
		}
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", src+"/_bulk_docs", map[string]any{"new_edits": false, "docs": seedDocs}, nil); st != 201 {
		t.Fatalf("seed: %d", st)
	}
	db := localdbtest.OpenNamed(t, "revids", nil)
	res := replicate(t, sync.Options{Source: Remote(t, src, nil), Target: Local(db), BatchSize: 16})
	if res.Stats.DocWriteFailures != 0 {
		t.Fatalf("pull: %+v", res.Stats)
	}
	dst := newDB(t)
	res = replicate(t, sync.Options{Source: Local(db), Target: Remote(t, dst, nil), BatchSize: 16})
	if res.Stats.DocWriteFailures != 0 {
		t.Fatalf("push: %+v", res.Stats)
	}
	for _, d := range docs {
		want := d.leaves
		srcLeaves, srcWin := remoteLeaves(t, src, d.id)
		if !sameLeafSet(srcLeaves, want) {
			t.Fatalf("%s on the source: %+v, want %+v", d.id, srcLeaves, want)
		}
		got := storeLeaves(t, db, d.id)
		if !sameLeafSet(got, want) || got[0].Rev != want[0].Rev {
			t.Fatalf("%s in the store: %+v, want %+v (winner first)", d.id, got, want)
		}
		dstLeaves, dstWin := remoteLeaves(t, dst, d.id)
		if !sameLeafSet(dstLeaves, want) {
			t.Fatalf("%s on the target: %+v, want %+v", d.id, dstLeaves, want)
		}
		if caps.RevIDOrder && (srcWin != want[0].Rev || dstWin != want[0].Rev) {
			t.Fatalf("%s: winners source %s, target %s; CouchDB's is %s", d.id, srcWin, dstWin, want[0].Rev)
		}
	}
	// Nothing left to copy either way.
	if res := replicate(t, sync.Options{Source: Remote(t, src, nil), Target: Local(db)}); res.Stats.DocsWritten != 0 {
		t.Fatalf("a second pull wrote %+v", res.Stats)
	}
	if res := replicate(t, sync.Options{Source: Local(db), Target: Remote(t, dst, nil)}); res.Stats.DocsWritten != 0 {
		t.Fatalf("a second push wrote %+v", res.Stats)
	}
}
