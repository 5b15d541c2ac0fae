package localdb_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

// dump renders what a store holds: its info, its feed and every
// document's leaves with their history.
func dump(t testing.TB, db *localdb.DB) []string {
	t.Helper()
	info, err := db.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{fmt.Sprintf("info %d %d %d", info.DocCount, info.DocDelCount, info.UpdateSeq)}
	var ids []string
	_, err = db.Changes(bg, localdb.ChangesOptions{AllDocs: true}, func(c *localdb.Change) error {
		out = append(out, fmt.Sprintf("change %d %s %v %v", c.Seq, c.ID, c.Revs, c.Deleted))
		ids = append(ids, c.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		res, err := db.OpenRevs(bg, id, nil, localdb.GetOptions{Revs: true, Attachments: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			out = append(out, describe(t, id, r, nil))
		}
	}
	return out
}

// writeAlone writes docs (new_edits=false) one document at a time: the
// entries naming a document in one batch of their own, the documents in
// the order of the entry that last names each, where a batch of all of
// them gives the document its sequence. It returns the results in docs'
// order.
func writeAlone(t testing.TB, db *localdb.DB, docs []*couchdoc.Doc) []couchdoc.DocResult {
	t.Helper()
	entries := map[string][]int{}
	for i, d := range docs {
		entries[d.ID] = append(entries[d.ID], i)
	}
	out := make([]couchdoc.DocResult, len(docs))
	for i, d := range docs {
		idx := entries[d.ID]
		if idx[len(idx)-1] != i {
			continue
		}
		group := make([]*couchdoc.Doc, len(idx))
		for k, j := range idx {
			group[k] = docs[j]
		}
		res, err := db.BulkDocs(bg, group, false)
		if err != nil {
			t.Fatal(err)
		}
		for k, j := range idx {
			out[j] = res[k]
		}
	}
	return out
}

// A document met again in the batch that buffered its new row (a second
// leaf, a tombstone, a newer revision, one that stems, one with an
// attachment) ends up as if each document had been written alone (its
// entries in one batch, see writeAlone).
func TestBatchRewritesBufferedRows(t *testing.T) {
	var docs []*couchdoc.Doc
	add := func(id string, deleted bool, body string, history ...string) {
		docs = append(docs, replDoc(t, id, deleted, body, history...))
	}
	for i := range 30 {
		add(fmt.Sprintf("n%02d", i), false, fmt.Sprintf(`{"i":%d}`, i), "1-a")
		switch i {
		case 3:
			add("n01", false, `{"c":1}`, "1-b")                      // a conflicting leaf
			add("n02", true, `{}`, "2-c", "1-a")                     // a tombstone on the leaf
			add("n03", false, `{"v":2}`, "2-d", "1-a")               // a newer revision
			add("n01", false, `{"c":2}`, "2-e", "1-b")               // again, on the other branch
			add("n00", false, `{"s":1}`, "4-f", "3-f", "2-f", "1-a") // stems 1-a (revs_limit 3)
		case 5:
			d := replDoc(t, "n04", false, `{}`, "2-a", "1-a")
			d.Attachments = map[string]*couchdoc.Attachment{"f": {Data: []byte("x")}}
			docs = append(docs, d)
			add("n04", false, `{"after":1}`, "3-a", "2-a", "1-a")
		case 7:
			add("n06", false, `{"known":1}`, "1-a") // already there: ignored
			add("n05", true, `{}`, "1-c")           // a second, deleted leaf
		}
	}
	got := batchAsAlone(t, docs)
	if !strings.Contains(strings.Join(got, "\n"), `n01 2-e del=false {"c":2}`) {
		t.Fatalf("fixture: %s", strings.Join(got, "\n"))
	}
}

// FuzzBatchVsAlone writes replicated revisions of a few documents (random
// branches, depths and tombstones, revs_limit 3) in one batch and one by
// one: results and stores must be the same.
func FuzzBatchVsAlone(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 5, 1, 1, 2, 2, 0, 9, 3, 0, 2, 4})
	f.Add([]byte{1, 0, 0, 1, 4, 0, 1, 8, 1, 1, 3, 2, 2, 7, 0, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 90 {
			return
		}
		var docs []*couchdoc.Doc
		for i := 0; i+2 < len(data); i += 3 {
			id := fmt.Sprintf("d%d", data[i]%4)
			gen := 1 + int(data[i+1]%5)
			branch := "abc"[data[i+1]/5%3 : data[i+1]/5%3+1]
			hist := []string{}
			for g := gen; g >= 2; g-- {
				hist = append(hist, fmt.Sprintf("%d-%s", g, branch))
			}
			hist = append(hist, "1-f")
			docs = append(docs, replDoc(t, id, data[i+2]&1 == 1, fmt.Sprintf(`{"k":%d}`, data[i+2]), hist...))
		}
		batchAsAlone(t, docs)
	})
}

// batchAsAlone writes docs (replicated revisions) to a store (revs_limit
// 3) in one batch and to another one by one: the results and the stores
// must be the same. It returns the batch store's dump.
func batchAsAlone(t *testing.T, docs []*couchdoc.Doc) []string {
	t.Helper()
	opts := &localdb.Options{RevsLimit: 3}
	batch, alone := localdbtest.OpenWith(t, opts), localdbtest.OpenWith(t, opts)
	res, err := batch.BulkDocs(bg, docs, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range writeAlone(t, alone, docs) {
		if !reflect.DeepEqual(res[i], r) {
			t.Fatalf("doc %d: batch %+v, alone %+v", i, res[i], r)
		}
	}
	got, want := dump(t, batch), dump(t, alone)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("batch:\n%s\nalone:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return got
}
