package main

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

func TestDatasetIsReproducible(t *testing.T) {
	a := &Dataset{Seed: 3, Docs: 100}
	b := &Dataset{Seed: 3, Docs: 5000}
	c := &Dataset{Seed: 4, Docs: 100}
	for i := 0; i < 100; i++ {
		ea := a.Doc(i).AppendBulkEntries(nil)
		if eb := b.Doc(i).AppendBulkEntries(nil); !bytes.Equal(ea, eb) {
			t.Fatalf("doc %d depends on the dataset size", i)
		}
		if ec := c.Doc(i).AppendBulkEntries(nil); bytes.Equal(ea, ec) {
			t.Fatalf("doc %d does not depend on the seed", i)
		}
	}
}

func TestDatasetEntriesAreValidBulkDocs(t *testing.T) {
	ds := &Dataset{Seed: 1, Docs: 1000}
	kinds := map[string]int{}
	atts := 0
	for i := 0; i < ds.Docs; i++ {
		g := ds.Doc(i)
		kinds[g.Kind]++
		entries := g.AppendBulkEntries([]byte("["))
		entries = append(entries, ']')
		var docs []struct {
			ID        string `json:"_id"`
			Rev       string `json:"_rev"`
			Deleted   bool   `json:"_deleted"`
			Revisions struct {
				Start int      `json:"start"`
				IDs   []string `json:"ids"`
			} `json:"_revisions"`
			Attachments map[string]struct {
				Data []byte `json:"data"`
			} `json:"_attachments"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(entries, &docs); err != nil {
			t.Fatalf("doc %d: %v\n%s", i, err, entries)
		}
		if len(docs) != len(g.Leaves) {
			t.Fatalf("doc %d: %d entries for %d leaves", i, len(docs), len(g.Leaves))
		}
		for k, d := range docs {
			if d.ID != g.ID || d.Rev != g.Leaves[k].Rev() || d.Revisions.Start != g.Leaves[k].Start || len(d.Revisions.IDs) != d.Revisions.Start {
				t.Fatalf("doc %d leaf %d: %+v", i, k, d)
			}
			if !d.Deleted && d.Type == "" {
				t.Fatalf("doc %d leaf %d has no body", i, k)
			}
		}
		if g.Att != nil {
			atts++
			if n := len(docs[0].Attachments[g.Att.Name].Data); int64(n) != g.Att.Size || n < 10<<10 || n > 500<<10 {
				t.Fatalf("doc %d: attachment of %d bytes, want %d in [10 KB, 500 KB]", i, n, g.Att.Size)
			}
		}
		if len(g.Leaves[0].Body) < 700 && !g.Leaves[0].Deleted {
			t.Fatalf("doc %d: body of %d bytes", i, len(g.Leaves[0].Body))
		}
		if ds.Changed(i) {
			if _, err := ds.Edit(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	if atts != 10 || ds.ChangedCount() != 10 {
		t.Errorf("%d attachments, %d changed; want 10 and 10", atts, ds.ChangedCount())
	}
	for _, k := range []string{kindSingle, kindMulti, kindConflict, kindDeleted} {
		if kinds[k] == 0 {
			t.Errorf("no %s documents: %v", k, kinds)
		}
	}
}

func TestAttachmentReaderMatchesBytes(t *testing.T) {
	a := &GenAtt{Size: 100003, seed: 9, index: 2}
	got, err := io.ReadAll(io.LimitReader(a.Reader(), 1<<20))
	if err != nil || !bytes.Equal(got, a.Bytes()) || int64(len(got)) != a.Size {
		t.Fatalf("reader gave %d bytes (%v), Bytes %d", len(got), err, a.Size)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GB": 1 << 30, "200MB": 200 << 20, "64kb": 64 << 10, "1000": 1000, "1.5G": 3 << 29} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GB", "-1MB", "abc"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

func TestDiffWinners(t *testing.T) {
	want := []idRev{{"a", "1-x"}, {"b", "2-y"}, {"c", "1-z"}}
	if err := diffWinners(want, []idRev{{"c", "1-z"}, {"a", "1-x"}, {"b", "2-y"}}); err != nil {
		t.Errorf("equal sets differ: %v", err)
	}
	if err := diffWinners(want, []idRev{{"a", "1-x"}, {"b", "2-q"}}); err == nil {
		t.Error("missing doc and different winner not seen")
	}
}

func TestSameBytes(t *testing.T) {
	a := &GenAtt{Size: 5000, seed: 1, index: 50}
	if err := sameBytes(bytes.NewReader(a.Bytes()), a); err != nil {
		t.Fatalf("identical bytes: %v", err)
	}
	bad := a.Bytes()
	bad[4321] ^= 1
	if err := sameBytes(bytes.NewReader(bad), a); err == nil {
		t.Error("a flipped bit was not seen")
	}
	if err := sameBytes(bytes.NewReader(a.Bytes()[:4999]), a); err == nil {
		t.Error("a short attachment was not seen")
	}
}
