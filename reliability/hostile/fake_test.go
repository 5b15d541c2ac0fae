package hostile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// fake is a hostile or broken CouchDB source: it answers the replication
// protocol's endpoints for one database "db" from canned answers, and
// records the request URIs it got.
type fake struct {
	changes string
	// bulkGet answers POST /db/_bulk_get (status 404 when empty: the client
	// falls back to open_revs).
	bulkGet  func(w http.ResponseWriter, body string)
	openRevs func(w http.ResponseWriter, r *http.Request)
	mu       gosync.Mutex
	uris     []string
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.uris = append(f.uris, r.Method+" "+r.RequestURI)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.EscapedPath()
	switch {
	case p == "/":
		io.WriteString(w, `{"couchdb":"Welcome","version":"3.3.3"}`)
	case p == "/db" && r.Method == http.MethodGet:
		io.WriteString(w, `{"db_name":"db","update_seq":"9-x","doc_count":1,"instance_start_time":"0"}`)
	case strings.HasPrefix(p, "/db/_local/"):
		if r.Method == http.MethodPut {
			w.WriteHeader(201)
			io.WriteString(w, `{"ok":true,"id":"x","rev":"0-1"}`)
			return
		}
		w.WriteHeader(404)
		io.WriteString(w, `{"error":"not_found","reason":"missing"}`)
	case p == "/db/_changes":
		io.WriteString(w, f.changes)
	case p == "/db/_ensure_full_commit":
		w.WriteHeader(201)
		io.WriteString(w, `{"ok":true}`)
	case p == "/db/_bulk_get" && f.bulkGet != nil:
		b, _ := io.ReadAll(r.Body)
		f.bulkGet(w, string(b))
	case strings.HasPrefix(p, "/db/") && r.URL.Query().Has("open_revs") && f.openRevs != nil:
		f.openRevs(w, r)
	default:
		w.WriteHeader(404)
		io.WriteString(w, `{"error":"not_found","reason":"missing"}`)
	}
}

func (f *fake) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.uris...)
}

// pullFrom pulls from the fake into a fresh store and returns the store,
// the replication's result and error.
func pullFrom(t *testing.T, f http.Handler) (*localdb.DB, *sync.Result, error) {
	t.Helper()
	return pullWithin(t, f, 30*time.Second)
}

// pullWithin is pullFrom with a bound on the whole replication.
func pullWithin(t *testing.T, f http.Handler, d time.Duration) (*localdb.DB, *sync.Result, error) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	remote, err := couch.New(srv.URL+"/db", &couch.Options{Timeout: 3 * time.Second, Retries: 1, BackoffBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := sync.Replicate(ctx, sync.Options{Source: remote, Target: localpeer.New(db), Retries: 1, RetryDelay: time.Millisecond})
	rtest.Count.Scenarios.Add(1)
	return db, res, err
}

// changesFor lists one change per id/rev pair.
func changesFor(pairs ...string) string {
	var rows []string
	for i := 0; i+1 < len(pairs); i += 2 {
		rows = append(rows, fmt.Sprintf(`{"seq":"%d-x","id":%q,"changes":[{"rev":%q}]}`, i/2+1, pairs[i], pairs[i+1]))
	}
	return `{"results":[` + strings.Join(rows, ",") + `],"last_seq":"9-x"}`
}
