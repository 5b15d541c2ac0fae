package localpeer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
)

func open(t *testing.T, name string) *localdb.DB {
	t.Helper()
	db, err := localdb.Open(filepath.Join(t.TempDir(), name+".db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.CheckInvariants(context.Background()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		db.Close()
	})
	return db
}

func put(t *testing.T, db *localdb.DB, id, rev, body string) string {
	t.Helper()
	r, err := db.Put(context.Background(), &couchdoc.Doc{ID: id, Rev: rev, Body: json.RawMessage(body)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestChangesMapsSeqsAndFilters(t *testing.T) {
	ctx := context.Background()
	db := open(t, "a")
	p := localpeer.New(db)
	for i := range 5 {
		put(t, db, fmt.Sprintf("d%d", i), "", fmt.Sprintf(`{"n":%d}`, i))
	}
	var seqs []string
	last, err := p.Changes(ctx, sync.ChangesOptions{Since: json.RawMessage("2"), Limit: 2}, func(c *couchdoc.Change) error {
		seqs = append(seqs, string(c.Seq))
		return nil
	})
	if err != nil || !slices.Equal(seqs, []string{"3", "4"}) || string(last) != "4" {
		t.Fatalf("seqs %v last %s err %v", seqs, last, err)
	}
	var ids []string
	_, err = p.Changes(ctx, sync.ChangesOptions{Selector: json.RawMessage(`{"n":{"$gte":3}}`)}, func(c *couchdoc.Change) error {
		ids = append(ids, c.ID)
		return nil
	})
	if err != nil || !slices.Equal(ids, []string{"d3", "d4"}) {
		t.Fatalf("selector: %v %v", ids, err)
	}
	for _, bad := range []string{`"abc"`, `-3`, `{}`} {
		if _, err := p.Changes(ctx, sync.ChangesOptions{Since: json.RawMessage(bad)}, func(*couchdoc.Change) error { return nil }); !errors.Is(err, couchdoc.ErrBadRequest) {
			t.Errorf("since %s: %v", bad, err)
		}
	}
	if _, err := p.Changes(ctx, sync.ChangesOptions{Filter: "app/f"}, func(*couchdoc.Change) error { return nil }); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Errorf("missing design filter: %v", err)
	}
	// Longpoll waits for the next change.
	info, err := p.Info(ctx)
	if err != nil || string(info.UpdateSeq) != "5" {
		t.Fatalf("info %+v %v", info, err)
	}
	last = info.UpdateSeq
	done := make(chan []string)
	go func() {
		var got []string
		p.Changes(ctx, sync.ChangesOptions{Since: last, Feed: "longpoll"}, func(c *couchdoc.Change) error {
			got = append(got, c.ID)
			return nil
		})
		done <- got
	}()
	time.Sleep(20 * time.Millisecond)
	put(t, db, "late", "", `{}`)
	select {
	case got := <-done:
		if !slices.Equal(got, []string{"late"}) {
			t.Fatalf("longpoll got %v", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("longpoll never returned")
	}
}

func TestLocalCheckpointDocs(t *testing.T) {
	ctx := context.Background()
	p := localpeer.New(open(t, "a"))
	if _, err := p.GetLocal(ctx, "x"); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	rev, err := p.PutLocal(ctx, "x", json.RawMessage(`{"_id":"_local/x","a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.GetLocal(ctx, "x")
	if err != nil || !bytes.Contains(raw, []byte(`"_rev":"`+rev+`"`)) || !bytes.Contains(raw, []byte(`"a":1`)) {
		t.Fatalf("%s %v", raw, err)
	}
	if _, err := p.PutLocal(ctx, "x", json.RawMessage(`{"a":2}`)); !errors.Is(err, couchdoc.ErrConflict) {
		t.Fatalf("stale rev: %v", err)
	}
}

func syncLocal(t *testing.T, a, b *localdb.DB) *sync.SyncResult {
	t.Helper()
	res, err := sync.Sync(context.Background(), localpeer.New(a), localpeer.New(b), sync.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestLocalToLocal replicates between two stores: the whole pipeline over
// real stores, with conflicts, deletions and a streamed attachment.
func TestLocalToLocal(t *testing.T) {
	ctx := context.Background()
	a, b := open(t, "a"), open(t, "b")
	for i := range 300 {
		put(t, a, fmt.Sprintf("doc%03d", i), "", fmt.Sprintf(`{"i":%d}`, i))
	}
	r1 := put(t, a, "c", "", `{"v":0}`)
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	if _, err := a.Put(ctx, &couchdoc.Doc{ID: "att", Body: json.RawMessage(`{}`), Attachments: map[string]*couchdoc.Attachment{
		"big": {Name: "big", ContentType: "application/octet-stream", Body: bytes.NewReader(big), Length: int64(len(big))}}}); err != nil {
		t.Fatal(err)
	}
	res := syncLocal(t, a, b)
	if res.Push.Stats.DocsWritten != 302 {
		t.Fatalf("push %+v", res.Push.Stats)
	}
	put(t, a, "c", r1, `{"v":"a"}`)
	put(t, b, "c", r1, `{"v":"b"}`)
	dr, _ := b.Get(ctx, "doc007", localdb.GetOptions{})
	if _, err := b.Delete(ctx, "doc007", dr.Rev); err != nil {
		t.Fatal(err)
	}
	syncLocal(t, a, b)
	ga, _ := a.Get(ctx, "c", localdb.GetOptions{Conflicts: true})
	gb, _ := b.Get(ctx, "c", localdb.GetOptions{Conflicts: true})
	if ga.Rev != gb.Rev || !slices.Equal(ga.Conflicts, gb.Conflicts) || len(ga.Conflicts) != 1 {
		t.Fatalf("conflict: a %s %v, b %s %v", ga.Rev, ga.Conflicts, gb.Rev, gb.Conflicts)
	}
	if _, err := a.Get(ctx, "doc007", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("deletion not replicated: %v", err)
	}
	_, body, err := b.OpenAttachment(ctx, "att", "", "big")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if !bytes.Equal(got, big) {
		t.Fatalf("attachment: %d bytes", len(got))
	}
	// An edit that keeps the attachment travels with a stub: no PutDoc.
	prev, _ := b.Get(ctx, "att", localdb.GetOptions{})
	prev.Body = json.RawMessage(`{"edited":true}`)
	rev2, err := b.Put(ctx, prev)
	if err != nil {
		t.Fatal(err)
	}
	cp := &countingPeer{Peer: localpeer.New(a)}
	if _, err := sync.Replicate(ctx, sync.Options{Source: localpeer.New(b), Target: cp}); err != nil {
		t.Fatal(err)
	}
	ga2, err := a.Get(ctx, "att", localdb.GetOptions{})
	if err != nil || ga2.Rev != rev2 || ga2.Attachments["big"] == nil || cp.putDocs != 0 {
		t.Fatalf("stub edit: %v rev %s atts %v putdocs %d", err, ga2.Rev, ga2.Attachments, cp.putDocs)
	}
	// In sync: nothing more moves.
	res = syncLocal(t, a, b)
	if res.Push.Stats.DocsRead+res.Pull.Stats.DocsRead != 0 {
		t.Fatalf("resync moved docs: %+v %+v", res.Push.Stats, res.Pull.Stats)
	}
}

type countingPeer struct {
	*localpeer.Peer
	putDocs int
}

func (p *countingPeer) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	p.putDocs++
	return p.Peer.PutDoc(ctx, doc)
}

// TestChangesRunsDesignFilters: a push that names a filter sends what
// CouchDB's filter would, with its query parameters as req.query.
func TestChangesRunsDesignFilters(t *testing.T) {
	ctx := context.Background()
	db := open(t, "f")
	p := localpeer.New(db)
	for i := range 6 {
		put(t, db, fmt.Sprintf("d%d", i), "", fmt.Sprintf(`{"n":%d}`, i))
	}
	put(t, db, "_design/app", "", `{"filters":{"min":"function (doc, req) { return doc.n >= Number(req.query.min); }"}}`)
	var ids []string
	_, err := p.Changes(ctx, sync.ChangesOptions{Filter: "app/min", QueryParams: map[string]string{"min": "4"}}, func(c *couchdoc.Change) error {
		ids = append(ids, c.ID)
		return nil
	})
	if err != nil || !slices.Equal(ids, []string{"d4", "d5"}) {
		t.Fatalf("filtered feed: %v %v", ids, err)
	}
	for _, bad := range []string{"app", "app/min/x"} {
		if _, err := p.Changes(ctx, sync.ChangesOptions{Filter: bad}, func(*couchdoc.Change) error { return nil }); !errors.Is(err, couchdoc.ErrBadRequest) {
			t.Errorf("filter %q: %v", bad, err)
		}
	}
	if _, err := p.Changes(ctx, sync.ChangesOptions{Filter: "app/nope"}, func(*couchdoc.Change) error { return nil }); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Errorf("missing filter: %v", err)
	}
}
