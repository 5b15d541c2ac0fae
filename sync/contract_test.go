package sync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// pouchFactory starts one pouchdb-server per test (lazily) and hands out
// fresh databases on it.
func pouchFactory(t *testing.T) synctest.Factory {
	var once gosync.Once
	var srv *testpeer.Server
	n := 0
	var mu gosync.Mutex
	return func(tb testing.TB) string {
		once.Do(func() { srv = testpeer.PouchDB(t) })
		mu.Lock()
		n++
		name := fmt.Sprintf("db%d", n)
		mu.Unlock()
		return srv.CreateDB(tb, name)
	}
}

func TestContractPouchDB(t *testing.T) {
	synctest.Run(t, pouchFactory(t), synctest.Caps{})
}

// TestWrongCredentials checks that a 401 from the remote stops the
// replication at once with an error naming the peer, without the password.
func TestWrongCredentials(t *testing.T) {
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"unauthorized","reason":"Name or password is incorrect."}`))
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1) + "/notes"
	db := localdbtest.OpenNamed(t, "local", nil)
	remote := synctest.Remote(t, u, nil)
	var events []string
	onEvent := func(e sync.Event) {
		b, _ := json.Marshal(e)
		events = append(events, string(b))
	}
	_, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: remote, Target: synctest.Local(db), OnEvent: onEvent})
	var pe *sync.PeerError
	if !errors.As(err, &pe) || pe.Role != "source" || !errors.Is(err, couchdoc.ErrUnauthorized) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "credentials") {
		t.Fatalf("error message %q", err)
	}
	if all := strings.Join(events, "\n"); len(events) == 0 || strings.Contains(all, "s3cret") || !strings.Contains(all, "unauthorized") {
		t.Fatalf("events: %s", all)
	}
	if requests > 2 {
		t.Fatalf("a 401 was retried: %d requests", requests)
	}
	// Push: the target is the one refusing.
	_, err = sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Local(db), Target: remote})
	if !errors.As(err, &pe) || pe.Role != "target" || !errors.Is(err, couchdoc.ErrUnauthorized) {
		t.Fatalf("push err = %v", err)
	}
}

// serverFactory starts our own server once per test and hands out fresh
// databases on it.
func serverFactory(t *testing.T) synctest.Factory {
	var once gosync.Once
	var srv *servertest.Instance
	var mu gosync.Mutex
	n := 0
	return func(tb testing.TB) string {
		once.Do(func() { srv = servertest.Start(t, nil) })
		mu.Lock()
		n++
		name := fmt.Sprintf("db%d", n)
		mu.Unlock()
		return srv.CreateDB(tb, name)
	}
}

func TestContractServer(t *testing.T) {
	synctest.Run(t, serverFactory(t), synctest.Caps{SelectorFeed: true, DocDelCount: true, AttsSince: true, RevIDOrder: true, AnyRevID: true})
}

// TestFirstPullHugeDoc: a document too large for a changes row (here with
// a 256 KiB row bound) makes the include_docs feed of a first pull fail;
// the feed is read again without documents and the pull completes.
func TestFirstPullHugeDoc(t *testing.T) {
	defer func(n int64) { wire.MaxChangesRow = n }(wire.MaxChangesRow)
	wire.MaxChangesRow = 256 << 10
	u := serverFactory(t)(t)
	big := strings.Repeat("x", 1<<20)
	docs := []any{map[string]any{"_id": "big", "s": big}}
	for i := range 30 {
		docs = append(docs, map[string]any{"_id": fmt.Sprintf("s%02d", i)})
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", u+"/_bulk_docs", map[string]any{"docs": docs}, nil); st != 201 {
		t.Fatalf("seed: %d", st)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	res, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Remote(t, u, nil), Target: synctest.Local(db)})
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.Get(context.Background(), "big", localdb.GetOptions{})
	if err != nil || len(d.Body) < 1<<20 || res.Stats.DocsWritten != 31 {
		t.Fatalf("big: %v, %d bytes, stats %+v", err, len(d.Body), res.Stats)
	}
}

// couchFactory hands out fresh databases on the Apache CouchDB named by
// SETTEE_COUCHDB_URL (an admin URL), deleting them when the test ends.
func couchFactory(t *testing.T) synctest.Factory {
	raw := strings.TrimSuffix(os.Getenv("SETTEE_COUCHDB_URL"), "/")
	if raw == "" {
		t.Skip("SETTEE_COUCHDB_URL is not set: the contract suite against a live Apache CouchDB 3 needs one (an admin URL such as http://admin:pw@127.0.0.1:5984); CI has none")
	}
	var mu gosync.Mutex
	n := 0
	prefix := fmt.Sprintf("settee_contract_%d_", time.Now().UnixNano())
	return func(tb testing.TB) string {
		mu.Lock()
		n++
		u := fmt.Sprintf("%s/%s%d", raw, prefix, n)
		mu.Unlock()
		if st := testutil.DoJSON(context.Background(), tb, "PUT", u, nil, nil); st != http.StatusCreated {
			tb.Fatalf("create %s: status %d", u, st)
		}
		tb.Cleanup(func() { testutil.DoJSON(context.Background(), tb, "DELETE", u, nil, nil) })
		return u
	}
}

// TestContractCouchDB runs the contract suite against a live CouchDB
// (opt-in, SETTEE_COUCHDB_URL).
func TestContractCouchDB(t *testing.T) {
	synctest.Run(t, couchFactory(t), synctest.Caps{SelectorFeed: true, DocDelCount: true, AttsSince: true, RevIDOrder: true, AnyRevID: true})
}
