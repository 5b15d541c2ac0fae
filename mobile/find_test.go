package mobile

import (
	"errors"
	"fmt"
	"github.com/settee/settee/localdb/query"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

func TestFindAndIndexes(t *testing.T) {
	d := openTest(t)
	for i := 0; i < 6; i++ {
		if _, err := d.Put(fmt.Sprintf(`{"_id": "t%d", "list": "l%d", "pos": %d}`, i, i%2, 10-i)); err != nil {
			t.Fatal(err)
		}
	}
	q := `{"selector": {"list": "l1"}, "sort": ["list", "pos"], "fields": ["_id", "pos"]}`
	if _, err := d.Find(q); !errors.Is(err, query.ErrNoUsableIndex) {
		t.Fatalf("sort without index: %v", err)
	}
	res, err := d.CreateIndex(`{"index": {"fields": ["list", "pos"]}, "ddoc": "todo", "name": "by-list"}`)
	if err != nil || mustJSON(t, res)["result"] != "created" {
		t.Fatalf("create index: %s %v", res, err)
	}
	res, err = d.Find(q)
	if err != nil {
		t.Fatal(err)
	}
	docs := mustJSON(t, res)["docs"].([]any)
	if len(docs) != 3 || docs[0].(map[string]any)["_id"] != "t5" || docs[2].(map[string]any)["pos"] != 9.0 {
		t.Fatalf("find: %s", res)
	}
	if ex, err := d.Explain(q); err != nil || mustJSON(t, ex)["index"].(map[string]any)["name"] != "by-list" {
		t.Fatalf("explain: %s %v", ex, err)
	}
	list, err := d.Indexes()
	if err != nil || mustJSON(t, list)["total_rows"] != 2.0 {
		t.Fatalf("indexes: %s %v", list, err)
	}
	if err := d.DeleteIndex("todo", "by-list"); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteIndex("todo", "by-list"); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := d.Find(`{"selector": "x"}`); err == nil {
		t.Fatal("bad query accepted")
	}
}

type queryRecorder struct {
	results chan string
	errs    chan string
}

func (q *queryRecorder) OnResult(js string) { q.results <- js }
func (q *queryRecorder) OnError(msg string) { q.errs <- msg }

func TestObserve(t *testing.T) {
	d := openTest(t)
	if _, err := d.Put(`{"_id": "a", "list": "x"}`); err != nil {
		t.Fatal(err)
	}
	rec := &queryRecorder{results: make(chan string, 10), errs: make(chan string, 1)}
	if _, err := d.Observe(`{"selector": "bad"}`, rec); err == nil {
		t.Fatal("bad query accepted")
	}
	token, err := d.Observe(`{"selector": {"list": "x"}, "fields": ["_id"]}`, rec)
	if err != nil {
		t.Fatal(err)
	}
	wait := func() map[string]any {
		t.Helper()
		select {
		case js := <-rec.results:
			return mustJSON(t, js)
		case msg := <-rec.errs:
			t.Fatalf("live query failed: %s", msg)
		case <-time.After(10 * time.Second):
			t.Fatal("no result")
		}
		return nil
	}
	if u := wait(); len(u["docs"].([]any)) != 1 {
		t.Fatalf("initial: %v", u)
	}
	if _, err := d.Put(`{"_id": "b", "list": "x"}`); err != nil {
		t.Fatal(err)
	}
	u := wait()
	if ch := u["changes"].([]any); len(ch) != 1 || ch[0].(map[string]any)["kind"] != "added" || ch[0].(map[string]any)["id"] != "b" {
		t.Fatalf("update: %v", u)
	}
	d.StopObserving(token)
	d.StopObserving(token)
}
