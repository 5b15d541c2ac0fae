package synctest

import (
	"context"
	"encoding/json"
	"errors"
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
