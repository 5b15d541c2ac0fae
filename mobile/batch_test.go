package mobile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSaveAll(t *testing.T) {
	d := openTest(t)
	rev := must(d.Put(`{"_id":"taken"}`))
	js := must(d.SaveAll(`[{"_id":"a","n":1},{"_id":"taken"},{"n":3},{"_id":"_local/l"}]`))
	var res []map[string]any
	if err := json.Unmarshal([]byte(js), &res); err != nil || len(res) != 4 {
		t.Fatalf("results %s: %v", js, err)
	}
	if res[0]["ok"] != true || res[0]["id"] != "a" || !strings.HasPrefix(res[0]["rev"].(string), "1-") {
		t.Errorf("a: %v", res[0])
	}
	if res[1]["error"] != "conflict" || res[1]["reason"] != "Document update conflict." || res[1]["id"] != "taken" || res[1]["ok"] != nil {
		t.Errorf("taken: %v", res[1])
	}
	if id, _ := res[2]["id"].(string); res[2]["ok"] != true || len(id) != 32 {
		t.Errorf("a document without _id gets a UUID: %v", res[2])
	}
	if res[3]["ok"] != true {
		t.Errorf("local: %v", res[3])
	}
	if got := mustJSON(t, must(d.Get("taken"))); got["_rev"] != rev {
		t.Errorf("taken changed: %v", got)
	}
	// CouchDB's request body works too.
	if js := must(d.SaveAll(`{"docs":[{"_id":"b"}]}`)); !strings.Contains(js, `"ok":true`) {
		t.Errorf("{docs}: %s", js)
	}
	// A malformed document refuses the call and writes nothing.
	before := mustJSON(t, must(d.Info()))["update_seq"]
	for _, bad := range []string{`[{"_id":"c"},{"_id":"d","_bogus":1}]`, `{"_id":"x"}`, `nope`, `null`} {
		if _, err := d.SaveAll(bad); ErrorCode(err) != CodeBadRequest {
			t.Errorf("SaveAll(%s): %v", bad, err)
		}
	}
	if after := mustJSON(t, must(d.Info()))["update_seq"]; after != before {
		t.Errorf("update_seq moved from %v to %v", before, after)
	}
}

type batchFunc func(b *Batch) error

func (f batchFunc) Run(b *Batch) error { return f(b) }

func TestInBatchCommits(t *testing.T) {
	d := openTest(t)
	changes := make(chan string, 10)
	must(d.AddChangeListener(listenerFunc(func(js string) { changes <- js })))
	err := d.InBatch(batchFunc(func(b *Batch) error {
		r1 := must(b.Put(`{"_id":"a","n":1}`))
		must(b.Put(`{"_id":"a","_rev":"` + r1 + `","n":2}`))
		// The Database's Put and Delete, called from the batch's function,
		// join the batch (no deadlock).
		r2 := must(d.Put(`{"_id":"b"}`))
		must(d.Delete("b", r2))
		res := must(d.SaveAll(`[{"_id":"c"},{"_id":"a"}]`))
		if !strings.Contains(res, `"error":"conflict"`) {
			t.Errorf("SaveAll in the batch: %s", res)
		}
		// Other writes would wait for the batch: refused.
		if err := d.Compact(); ErrorCode(err) != CodeBadRequest {
			t.Errorf("Compact inside the batch: %v", err)
		}
		if err := d.InBatch(batchFunc(func(*Batch) error { return nil })); ErrorCode(err) != CodeBadRequest {
			t.Errorf("nested InBatch: %v", err)
		}
		if _, err := d.Get("a"); ErrorCode(err) != CodeNotFound {
			t.Errorf("a visible before the commit: %v", err)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, must(d.Get("a"))); got["n"] != 2.0 {
		t.Fatalf("a = %v", got)
	}
	must(d.Get("c"))
	// One commit; the listener hears each document once, at its last change.
	ids := map[string]bool{}
	for range 3 {
		ids[mustJSON(t, waitFor(t, changes))["id"].(string)] = true
	}
	if !ids["a"] || !ids["b"] || !ids["c"] {
		t.Fatalf("heard %v", ids)
	}
}

func TestInBatchRollsBack(t *testing.T) {
	appErr := errors.New("the app's own exception")
	for _, c := range []struct {
		name string
		fail func() error
		want func(error) bool
	}{
		{"error", func() error { return appErr }, func(err error) bool { return err == appErr }},
		{"panic", func() error { panic("app bug") }, func(err error) bool { return ErrorCode(err) == CodeInternal }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := openTest(t)
			useLogger(t, LevelError)
			rev := must(d.Put(`{"_id":"a","n":1}`))
			var kept *Batch
			err := d.InBatch(batchFunc(func(b *Batch) error {
				kept = b
				must(b.Put(`{"_id":"a","_rev":"` + rev + `","n":2}`))
				must(d.Put(`{"_id":"new"}`))
				return c.fail()
			}))
			if !c.want(err) {
				t.Fatalf("InBatch returned %v", err)
			}
			if got := mustJSON(t, must(d.Get("a"))); got["_rev"] != rev {
				t.Fatalf("a = %v", got)
			}
			if _, err := d.Get("new"); ErrorCode(err) != CodeNotFound {
				t.Fatalf("new: %v", err)
			}
			// The handle is over; the Database writes again.
			if _, err := kept.Put(`{"_id":"late"}`); err == nil {
				t.Fatal("a put through a finished batch was accepted")
			}
			must(d.Put(`{"_id":"after"}`))
		})
	}
}

// TestInBatchOtherThreadsWait: a write from another goroutine during a
// batch waits for the commit instead of joining the batch.
func TestInBatchOtherThreadsWait(t *testing.T) {
	d := openTest(t)
	done := make(chan error, 1)
	err := d.InBatch(batchFunc(func(b *Batch) error {
		go func() {
			_, err := d.Put(`{"_id":"outside"}`)
			done <- err
		}()
		select {
		case err := <-done:
			t.Errorf("a write from another goroutine did not wait: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		_, err := b.Put(`{"_id":"inside"}`)
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the other write never ran")
	}
}
