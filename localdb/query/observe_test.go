package query_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

func kinds(u *query.Update) []string {
	var out []string
	for _, c := range u.Changes {
		out = append(out, c.Kind+":"+c.ID)
	}
	return out
}

func next(t *testing.T, ch <-chan *query.Update) *query.Update {
	t.Helper()
	select {
	case u, ok := <-ch:
		if !ok {
			t.Fatal("live query ended")
		}
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no update")
	}
	return nil
}

func TestObserve(t *testing.T) {
	dir := t.TempDir()
	db, err := localdb.Open(filepath.Join(dir, "live.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put(t, db, "a", `{"list": "x", "pos": 1}`)
	put(t, db, "b", `{"list": "x", "pos": 2}`)
	put(t, db, "z", `{"list": "y", "pos": 0}`)
	createIndex(t, db, `{"index": {"fields": ["list", "pos"]}}`)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	ch, errc := query.ObserveChan(ctx, db, []byte(`{"selector": {"list": "x"}, "sort": ["list", "pos"], "fields": ["_id", "pos"]}`),
		nil)
	u := next(t, ch)
	if got := kinds(u); !reflect.DeepEqual(got, []string{"added:a", "added:b"}) || len(u.Docs) != 2 {
		t.Fatalf("initial: %v", got)
	}
	// A write that cannot change the result delivers nothing; the next
	// relevant one delivers only its own change.
	put(t, db, "y2", `{"list": "y", "pos": 5}`)
	c := put(t, db, "c", `{"list": "x", "pos": 3}`)
	if got := kinds(next(t, ch)); !reflect.DeepEqual(got, []string{"added:c"}) {
		t.Fatalf("add: %v", got)
	}
	rev := revOf(t, db, "a")
	putRev(t, db, "a", rev, `{"list": "x", "pos": 9}`)
	u = next(t, ch)
	if got := kinds(u); !reflect.DeepEqual(got, []string{"changed:a"}) || string(u.Docs[2]) != `{"_id":"a","pos":9}` {
		t.Fatalf("change: %v %s", got, u.Docs)
	}
	if _, err := db.Delete(bg, "c", c); err != nil {
		t.Fatal(err)
	}
	if got := kinds(next(t, ch)); !reflect.DeepEqual(got, []string{"removed:c"}) {
		t.Fatalf("delete: %v", got)
	}
	// A commit by another process (another handle on the file) is seen by
	// polling the file.
	other, err := localdb.Open(filepath.Join(dir, "live.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, other, "d", `{"list": "x", "pos": 0}`)
	other.Close()
	if got := kinds(next(t, ch)); !reflect.DeepEqual(got, []string{"added:d"}) {
		t.Fatalf("other process: %v", got)
	}
	// A burst is coalesced into updates that together say every change.
	var docs []*couchdoc.Doc
	for _, id := range []string{"e", "f", "g"} {
		docs = append(docs, &couchdoc.Doc{ID: id, Body: json.RawMessage(`{"list": "x", "pos": 4}`)})
	}
	if _, err := db.BulkDocs(bg, docs, true); err != nil {
		t.Fatal(err)
	}
	if got := kinds(next(t, ch)); !reflect.DeepEqual(got, []string{"added:e", "added:f", "added:g"}) {
		t.Fatalf("burst: %v", got)
	}
	cancel()
	for range ch {
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

func TestDiffMoves(t *testing.T) {
	db := localdbTestOpen(t)
	put(t, db, "a", `{"k": 1}`)
	b := put(t, db, "b", `{"k": 2}`)
	put(t, db, "c", `{"k": 3}`)
	createIndex(t, db, `{"index": {"fields": ["k"]}}`)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	ch, _ := query.ObserveChan(ctx, db, []byte(`{"selector": {"k": {"$gt": 0}}, "sort": ["k"], "fields": ["_id"]}`), nil)
	next(t, ch)
	// b's new revision moves it last; a and c keep their order.
	putRev(t, db, "b", b, `{"k": 9}`)
	u := next(t, ch)
	if got := kinds(u); !reflect.DeepEqual(got, []string{"changed:b"}) || u.Changes[0].Index != 2 || u.Changes[0].OldIndex != 1 {
		t.Fatalf("move: %+v", u.Changes)
	}
}

func revOf(t *testing.T, db *localdb.DB, id string) string {
	t.Helper()
	d, err := db.Get(bg, id, localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Rev
}
