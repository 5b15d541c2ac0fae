package mobile

import (
	"encoding/json"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

type changeFunc func(*ReplicatorStatus)

func (f changeFunc) OnStatus(s *ReplicatorStatus) { f(s) }

type docsFunc func(string)

func (f docsFunc) OnDocuments(js string) { f(js) }

// TestReplicatorListeners: several status listeners and a document
// listener beside SetListener's; progress only grows and ends complete;
// the documents moved are reported both ways, a deletion as one.
func TestReplicatorListeners(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "hub")
	d := openTest(t)
	for _, id := range []string{"l1", "l2", "l3"} {
		must(d.Put(`{"_id":"` + id + `"}`))
	}
	rev := must(d.Put(`{"_id":"gone"}`))
	must(d.Delete("gone", rev))
	httpDo(t, "PUT", url+"/r1", `{"v":1}`)
	httpDo(t, "PUT", url+"/r2", `{"v":2}`)

	r := must(d.NewReplicator(NewReplicatorConfig(url)))
	old := newRecorder()
	r.SetListener(old) // still works beside the others
	var mu gosync.Mutex
	var a, b []*ReplicatorStatus
	docs := map[string]map[string]any{} // direction/id -> document
	ta := r.AddChangeListener(changeFunc(func(s *ReplicatorStatus) { mu.Lock(); a = append(a, s); mu.Unlock() }))
	// The listeners hear each status after SetListener's (the same event
	// goroutine, one after the other): b says when it has heard the end.
	bStopped := make(chan struct{}, 4)
	// aRemoved is set once a's Remove returned; aAtRemove is how many
	// statuses a had heard when b heard its first status after that: a
	// call to a that began before Remove (the same event's, b's comes
	// after it) may still end; none may begin after.
	aRemoved, aAtRemove := false, -1
	tb := r.AddChangeListener(changeFunc(func(s *ReplicatorStatus) {
		mu.Lock()
		b = append(b, s)
		if aRemoved && aAtRemove < 0 {
			aAtRemove = len(a)
		}
		mu.Unlock()
		if s.State == "stopped" {
			select {
			case bStopped <- struct{}{}:
			default:
			}
		}
	}))
	td := r.AddDocumentListener(docsFunc(func(js string) {
		var ev struct {
			Direction string           `json:"direction"`
			Documents []map[string]any `json:"documents"`
		}
		if err := json.Unmarshal([]byte(js), &ev); err != nil {
			t.Errorf("documents JSON %s: %v", js, err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, doc := range ev.Documents {
			docs[ev.Direction+"/"+doc["id"].(string)] = doc
		}
	}))
	defer td.Remove()
	must(0, r.Start())
	end := old.waitState(t, "stopped")
	waitStopped(t, bStopped)
	// 4 pushed, 2 pulled; the pull, running beside the push, may also
	// read back what the push wrote (already here: handled too).
	if end.Completed != end.Total || end.Total < 6 || end.Total > 10 {
		t.Fatalf("end of the sync: %d/%d, want complete, 6 to 10", end.Completed, end.Total)
	}
	mu.Lock()
	for _, seen := range [][]*ReplicatorStatus{a, b} {
		if len(seen) == 0 {
			t.Fatal("a change listener heard nothing")
		}
		var lc, lt int64
		for _, s := range seen {
			if s.Completed < lc || s.Total < lt || s.Completed > s.Total {
				t.Fatalf("progress went from %d/%d to %d/%d", lc, lt, s.Completed, s.Total)
			}
			lc, lt = s.Completed, s.Total
		}
	}
	for _, k := range []string{"push/l1", "push/l2", "push/l3", "push/gone", "pull/r1", "pull/r2"} {
		if docs[k] == nil || docs[k]["rev"] == "" || docs[k]["error"] != nil {
			t.Errorf("%s: %v", k, docs[k])
		}
	}
	if docs["push/gone"]["deleted"] != true || docs["push/l1"]["deleted"] != nil {
		t.Errorf("deleted flags: %v %v", docs["push/gone"], docs["push/l1"])
	}
	first := end.Total
	mu.Unlock()

	// A removed listener hears nothing more; the others go on.
	ta.Remove()
	mu.Lock()
	aRemoved = true
	mu.Unlock()
	must(d.Put(`{"_id":"l4"}`))
	for len(bStopped) > 0 { // the first sync's ends, if it heard several
		<-bStopped
	}
	must(0, r.Start())
	end = old.waitState(t, "stopped")
	waitStopped(t, bStopped)
	// Progress counts from the replicator's creation.
	if end.Completed != end.Total || end.Total <= first {
		t.Fatalf("end of the second sync: %d/%d, want complete and past %d", end.Completed, end.Total, first)
	}
	mu.Lock()
	defer mu.Unlock()
	if aAtRemove < 0 || len(a) != aAtRemove {
		t.Errorf("a removed listener heard %d more statuses (b heard one after the removal: %v)", len(a)-aAtRemove, aAtRemove >= 0)
	}
	if last := b[len(b)-1]; last.State != "stopped" || last.Total != end.Total {
		t.Errorf("the remaining listener's last status: %+v", last)
	}
	if docs["push/l4"] == nil {
		t.Error("l4's push was not reported")
	}
	tb.Remove()
}

// waitStopped waits (bounded) for a listener's signal that it heard a
// stopped status.
func waitStopped(t *testing.T, c chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatal("the listener did not hear the replicator stop")
	}
}
