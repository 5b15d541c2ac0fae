package synctest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

func digestOf(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func testAttachments(t *testing.T, newDB Factory, caps Caps) {
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	small := []byte("hello attachment")
	// large streams on a pull into the store; medium is read into memory
	// and written in a batch (localpeer's InlineAttachmentMax).
	large, medium := make([]byte, 3<<20), make([]byte, 200<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range large {
		large[i] = byte(rng.Uint32())
	}
	copy(medium, large[1000:])
	doc := &couchdoc.Doc{ID: "withatts", Body: json.RawMessage(`{"k":1}`), Attachments: map[string]*couchdoc.Attachment{
		"small.txt":  {Name: "small.txt", ContentType: "text/plain", Data: small, Length: int64(len(small))},
		"large.bin":  {Name: "large.bin", ContentType: "application/octet-stream", Body: bytes.NewReader(large), Length: int64(len(large))},
		"medium.bin": {Name: "medium.bin", ContentType: "application/octet-stream", Body: bytes.NewReader(medium), Length: int64(len(medium))},
	}}
	rev, err := a.Put(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}
	syncBoth(t, Local(a), Remote(t, u, nil))
	rd, _ := RemoteGet(t, u, "withatts")
	if rd.Rev != rev || rd.Atts["large.bin"].Digest != digestOf(large) || rd.Atts["small.txt"].Length != int64(len(small)) {
		t.Fatalf("remote doc %+v", rd)
	}
	syncBoth(t, Local(b), Remote(t, u, nil))
	for name, want := range map[string][]byte{"small.txt": small, "medium.bin": medium, "large.bin": large} {
		_, body, err := b.OpenAttachment(context.Background(), "withatts", "", name)
		if err != nil {
			t.Fatalf("%s on b: %v", name, err)
		}
		got, err := io.ReadAll(body)
		body.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s on b: %d bytes, err %v", name, len(got), err)
		}
	}
	// An edit that keeps the attachments travels with stubs (atts_since =
	// the revision the other side has): the bytes are not sent again.
	prev, err := b.Get(context.Background(), "withatts", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev.Body = json.RawMessage(`{"k":2}`)
	rev2, err := b.Put(context.Background(), prev)
	if err != nil {
		t.Fatal(err)
	}
	cnt, cnt2 := &Counter{}, &Counter{}
	syncBoth(t, Local(b), Remote(t, u, cnt))
	syncBoth(t, Local(a), Remote(t, u, cnt2))
	t.Logf("edit keeping a 3 MB attachment: push moved %d bytes, pull %d", cnt.Bytes(), cnt2.Bytes())
	got, err := a.Get(context.Background(), "withatts", localdb.GetOptions{})
	if err != nil || got.Rev != rev2 || got.Attachments["large.bin"] == nil || got.Attachments["large.bin"].Digest != digestOf(large) {
		t.Fatalf("edit with stubs on a: %v %+v", err, got)
	}
	if caps.AttsSince && cnt.Bytes()+cnt2.Bytes() > 1<<20 {
		t.Fatalf("an edit keeping a 3 MB attachment moved %d bytes", cnt.Bytes()+cnt2.Bytes())
	}
}

func testContinuous(t *testing.T, newDB Factory) {
	u := newDB(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	r, err := sync.NewSync(Local(db), Remote(t, u, nil), sync.Options{Continuous: true, Heartbeat: 0})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(Ctx(t)); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	Put(t, db, "from-local", "", `{"x":1}`)
	testutil.Eventually(t, "local change pushed", func() bool { _, st := RemoteGet(t, u, "from-local"); return st == 200 })
	if st := testutil.DoJSON(context.Background(), t, "PUT", u+"/from-remote", map[string]any{"y": 2}, nil); st != 201 {
		t.Fatalf("remote put: %d", st)
	}
	testutil.Eventually(t, "remote change pulled", func() bool {
		_, err := db.Get(context.Background(), "from-remote", localdb.GetOptions{})
		return err == nil
	})
	if err := r.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if st := r.Status(); st.State != sync.StateStopped {
		t.Fatalf("state after stop: %s", st.State)
	}
}

func testCancelResume(t *testing.T, newDB Factory) {
	u := newDB(t)
	db := localdbtest.OpenNamed(t, "local", nil)
	const n = 2000
	PutDocs(t, db, "c", n)
	ctx, cancel := context.WithCancel(Ctx(t))
	opts := sync.Options{Source: Local(db), Target: Remote(t, u, nil), BatchSize: 100, Workers: 2,
		OnEvent: func(e sync.Event) {
			if e.Kind == sync.EventProgress && e.CheckpointedSeq != nil && e.Stats.DocsWritten >= 300 {
				cancel()
			}
		}}
	first, err := sync.Replicate(ctx, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	if first.LastSeq == nil || first.Stats.DocsWritten >= n {
		t.Fatalf("first run did not stop midway: %+v", first.Stats)
	}
	opts.OnEvent = nil
	second := replicate(t, opts)
	if second.StartSeq == nil || string(second.StartSeq) != string(first.LastSeq) {
		t.Fatalf("second run started at %s, checkpoint was %s", second.StartSeq, first.LastSeq)
	}
	if second.Stats.MissingChecked >= n {
		t.Fatalf("second run checked everything again: %+v", second.Stats)
	}
	if cnt, _ := RemoteDocCount(t, u); cnt != n {
		t.Fatalf("remote has %d docs, want %d", cnt, n)
	}
	// Nothing duplicated: every remote doc has one leaf at generation 1.
	var all struct {
		Rows []struct {
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
		} `json:"rows"`
	}
	testutil.DoJSON(context.Background(), t, "GET", u+"/_all_docs", nil, &all)
	for _, row := range all.Rows {
		if gen, _, _ := couchdoc.ParseRev(row.Value.Rev); gen != 1 {
			t.Fatalf("rev %s", row.Value.Rev)
		}
	}
	// The checkpoint never covers more than was written (the local
	// store's seqs count the docs here: one bulk write per doc), and the
	// second run started exactly there.
	var ck int64
	if err := json.Unmarshal(first.LastSeq, &ck); err != nil {
		t.Fatalf("local seq %s: %v", first.LastSeq, err)
	}
	if ck > first.Stats.DocsWritten || second.Stats.MissingChecked != n-ck {
		t.Fatalf("checkpoint %d, first wrote %d, second checked %d", ck, first.Stats.DocsWritten, second.Stats.MissingChecked)
	}
}

func testNoOpRequests(t *testing.T, newDB Factory) {
	u := newDB(t)
	src := localdbtest.OpenNamed(t, "src", nil)
	PutDocs(t, src, "n", 600)
	replicate(t, sync.Options{Source: Local(src), Target: Remote(t, u, nil)})
	db := localdbtest.OpenNamed(t, "local", nil)
	cnt := &Counter{}
	first := replicate(t, sync.Options{Source: Remote(t, u, cnt), Target: Local(db)})
	if first.Stats.DocsRead != 600 || first.Stats.DocsWritten != 600 {
		t.Fatalf("first pull: %+v", first.Stats)
	}
	by := cnt.By()
	if by["GET doc"] > 0 && by["POST _bulk_get"] > 0 {
		t.Fatalf("fetched both with _bulk_get and per doc: %v", by)
	}
	before := cnt.Total()
	second := replicate(t, sync.Options{Source: Remote(t, u, cnt), Target: Local(db)})
	if got := cnt.Total() - before; got > 5 {
		t.Fatalf("no-op pull made %d requests (want <= 5): %v", got, cnt.By())
	}
	if second.Stats.DocsRead != 0 || second.Stats.MissingChecked != 0 {
		t.Fatalf("no-op pull fetched: %+v", second.Stats)
	}
	t.Logf("first pull of 600 docs: %d requests %v; no-op pull: %d", before, by, cnt.Total()-before)
}

func testCreateTarget(t *testing.T, newDB Factory) {
	u := newDB(t) + "-created"
	db := localdbtest.OpenNamed(t, "local", nil)
	PutDocs(t, db, "x", 3)
	_, err := sync.Replicate(Ctx(t), sync.Options{Source: Local(db), Target: Remote(t, u, nil)})
	var pe *sync.PeerError
	if !errors.As(err, &pe) || pe.Role != "target" || !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("missing target: %v", err)
	}
	res := replicate(t, sync.Options{Source: Local(db), Target: Remote(t, u, nil), CreateTarget: true})
	if n, _ := RemoteDocCount(t, u); n != 3 || res.Stats.DocsWritten != 3 {
		t.Fatalf("created target has %d docs", n)
	}
	// A sync creates the missing remote too: its pull, which reads the
	// remote, does not fail before the push has made it.
	u2 := newDB(t) + "-synced"
	sres, err := sync.Sync(Ctx(t), Local(db), Remote(t, u2, nil), sync.Options{CreateTarget: true})
	if err != nil {
		t.Fatalf("sync with CreateTarget to a missing remote: %v", err)
	}
	if n, _ := RemoteDocCount(t, u2); n != 3 || sres.Push.Stats.DocsWritten != 3 {
		t.Fatalf("the remote a sync created has %d docs", n)
	}
}

func testOffline(t *testing.T, newDB Factory) {
	u := newDB(t)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	proxy := NewProxy(t, pu.Host)
	remote, err := couch.New(proxy.URL(u), &couch.Options{Retries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	r, err := sync.NewSync(Local(db), remote, sync.Options{Continuous: true, Retries: 1,
		RetryDelay: 20 * time.Millisecond, MaxRetryDelay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(Ctx(t)); err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	Put(t, db, "before", "", `{}`)
	testutil.Eventually(t, "first doc pushed", func() bool { _, st := RemoteGet(t, u, "before"); return st == 200 })
	proxy.Down()
	testutil.Eventually(t, "offline", func() bool { return r.Status().State == sync.StateOffline })
	Put(t, db, "while-offline", "", `{}`)
	if st := testutil.DoJSON(context.Background(), t, "PUT", u+"/remote-while-offline", map[string]any{"x": 1}, nil); st != 201 {
		t.Fatalf("remote put %d", st)
	}
	proxy.Up()
	testutil.Eventually(t, "pushed after reconnect", func() bool { _, st := RemoteGet(t, u, "while-offline"); return st == 200 })
	testutil.Eventually(t, "pulled after reconnect", func() bool {
		_, err := db.Get(context.Background(), "remote-while-offline", localdb.GetOptions{})
		return err == nil
	})
	if err := r.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
}
