package mobile

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// makeConflict gives document id two live leaves, 2-aaa... and 2-bbb...,
// the way a replication does (new_edits=false).
func makeConflict(t *testing.T, d *Database, id string) (revA, revB string) {
	t.Helper()
	base := strings.Repeat("0", 32)
	revA, revB = "2-"+strings.Repeat("a", 32), "2-"+strings.Repeat("b", 32)
	var docs []*couchdoc.Doc
	for _, r := range []struct{ rev, side string }{{revA, "a"}, {revB, "b"}} {
		docs = append(docs, &couchdoc.Doc{
			ID: id, Rev: r.rev, Body: json.RawMessage(`{"side":"` + r.side + `"}`),
			Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{r.rev[2:], base}},
		})
	}
	res, err := d.db.BulkDocs(context.Background(), docs, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
	}
	return revA, revB
}

type resolverFunc func(id, leaves string) (string, error)

func (f resolverFunc) Resolve(id, leaves string) (string, error) { return f(id, leaves) }

func conflictIDs(t *testing.T, d *Database) []string {
	t.Helper()
	var ids []string
	if err := json.Unmarshal([]byte(must(d.Conflicts())), &ids); err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestResolveConflictsPickWinner(t *testing.T) {
	d := openTest(t)
	revA, revB := makeConflict(t, d, "c1")
	if ids := conflictIDs(t, d); len(ids) != 1 || ids[0] != "c1" {
		t.Fatalf("Conflicts = %v", ids)
	}
	var seen []map[string]any
	n, err := d.ResolveConflicts(resolverFunc(func(id, leaves string) (string, error) {
		if err := json.Unmarshal([]byte(leaves), &seen); err != nil {
			return "", err
		}
		return revA, nil // the loser of CouchDB's pick (bbb sorts higher)
	}))
	if err != nil || n != 1 {
		t.Fatalf("ResolveConflicts = %d, %v", n, err)
	}
	if len(seen) != 2 || seen[0]["_rev"] != revB || seen[1]["_rev"] != revA || seen[1]["side"] != "a" {
		t.Fatalf("leaves given to the resolver = %v", seen)
	}
	doc := mustJSON(t, must(d.GetWithConflicts("c1")))
	if doc["_rev"] != revA || doc["_conflicts"] != nil {
		t.Fatalf("after resolution: %v", doc)
	}
	if ids := conflictIDs(t, d); len(ids) != 0 {
		t.Fatalf("Conflicts after resolution = %v", ids)
	}
}

func TestResolveConflictsMerge(t *testing.T) {
	d := openTest(t)
	_, revB := makeConflict(t, d, "c2")
	n, err := d.ResolveConflicts(resolverFunc(func(id, leaves string) (string, error) {
		return `{"side":"merged"}`, nil
	}))
	if err != nil || n != 1 {
		t.Fatalf("ResolveConflicts = %d, %v", n, err)
	}
	doc := mustJSON(t, must(d.GetWithConflicts("c2")))
	if doc["side"] != "merged" || !strings.HasPrefix(doc["_rev"].(string), "3-") || doc["_conflicts"] != nil {
		t.Fatalf("after merge: %v", doc)
	}
	if old := mustJSON(t, must(d.GetRev("c2", revB))); old["side"] != "b" {
		t.Fatalf("the merge is not a child of the winner: %v", old)
	}
}

func TestResolveConflictsSkipAndErrors(t *testing.T) {
	d := openTest(t)
	makeConflict(t, d, "s")
	makeConflict(t, d, "t")
	makeConflict(t, d, "u")
	appErr := errors.New("app resolver failed")
	n, err := d.ResolveConflicts(resolverFunc(func(id, leaves string) (string, error) {
		switch id {
		case "s":
			return "", nil // skip
		case "t":
			return "9-notaleaf", nil
		default:
			return "", appErr
		}
	}))
	if n != 0 || err == nil || !strings.Contains(err.Error(), "not a leaf") {
		t.Fatalf("ResolveConflicts = %d, %v", n, err)
	}
	if ids := conflictIDs(t, d); len(ids) != 3 {
		t.Fatalf("conflicts after failed resolutions = %v", ids)
	}
	n, err = d.ResolveConflicts(resolverFunc(func(id, leaves string) (string, error) { panic("resolver bug") }))
	if n != 0 || err == nil || !strings.Contains(err.Error(), "resolver bug") {
		t.Fatalf("panicking resolver: %d, %v", n, err)
	}
	if _, err := d.ResolveConflicts(nil); err == nil {
		t.Fatal("nil resolver accepted")
	}
}

// TestResolveMergeKeepsWinnersAttachments: a merged document without
// _attachments keeps the winner's attachments (the store's one rule).
func TestResolveMergeKeepsWinnersAttachments(t *testing.T) {
	d := openTest(t)
	_, revB := makeConflict(t, d, "m")
	if _, err := d.PutAttachment("m", revB, "photo.jpg", "image/jpeg", []byte("jpeg bytes")); err != nil {
		t.Fatal(err)
	}
	n, err := d.ResolveConflicts(resolverFunc(func(id, leaves string) (string, error) { return `{"side":"merged"}`, nil }))
	if n != 1 || err != nil {
		t.Fatalf("ResolveConflicts = %d, %v", n, err)
	}
	data, err := d.GetAttachment("m", "", "photo.jpg")
	if err != nil || string(data) != "jpeg bytes" {
		t.Fatalf("the winner's attachment after a merge: %q, %v", data, err)
	}
	if ids := conflictIDs(t, d); len(ids) != 0 {
		t.Fatalf("still in conflict: %v", ids)
	}
}
