package synctest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// Factory creates a fresh, empty database on a remote server and returns
// its URL (credentials, if any, in the URL's userinfo).
type Factory func(t testing.TB) string

// Counter is an http.RoundTripper counting requests by method and path
// suffix (the part after the database name).
type Counter struct {
	Base http.RoundTripper
	n    atomic.Int64
	// bytes counts request and response bodies.
	bytes atomic.Int64
	mu    gosync.Mutex
	by    map[string]int
}

// RoundTrip counts and forwards the request.
func (c *Counter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	c.mu.Lock()
	if c.by == nil {
		c.by = map[string]int{}
	}
	c.by[req.Method+" "+endpoint(req.URL)]++
	c.mu.Unlock()
	base := c.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if req.ContentLength > 0 {
		c.bytes.Add(req.ContentLength)
	}
	resp, err := base.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// Bytes returns the body bytes sent (with a known length) and received.
func (c *Counter) Bytes() int64 { return c.bytes.Load() }

// endpoint names a request by its last path element when it is a special
// one (_changes, _bulk_get, ...), "db" for the database itself, else "doc".
func endpoint(u *url.URL) string {
	p := strings.Trim(u.Path, "/")
	if !strings.Contains(p, "/") {
		return "db"
	}
	b := filepath.Base(u.Path)
	if len(b) > 0 && b[0] == '_' {
		return b
	}
	if filepath.Base(filepath.Dir(u.Path)) == "_local" {
		return "_local"
	}
	return "doc"
}

// Total returns the number of requests made.
func (c *Counter) Total() int64 { return c.n.Load() }

// By returns the counts per "METHOD endpoint".
func (c *Counter) By() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.by))
	for k, v := range c.by {
		out[k] = v
	}
	return out
}

// Remote opens a couch peer on dbURL counting its requests with cnt (may
// be nil).
func Remote(t testing.TB, dbURL string, cnt *Counter) sync.Peer {
	t.Helper()
	var opts couch.Options
	if cnt != nil {
		opts.Transport = cnt
	}
	p, err := couch.New(dbURL, &opts)
	if err != nil {
		t.Fatalf("couch.New(%s): %v", dbURL, err)
	}
	return p
}

// Local returns the peer of a store.
func Local(db *localdb.DB) sync.Peer { return localpeer.New(db) }

// Ctx returns a context bounded to a generous minute, cancelled at the end
// of the test.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// PutDocs writes n small documents "<prefix>NNNNN" to the store.
func PutDocs(t testing.TB, db *localdb.DB, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	docs := make([]*couchdoc.Doc, 0, 500)
	flush := func() {
		res, err := db.BulkDocs(ctx, docs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Error != "" {
				t.Fatalf("put %s: %s", r.ID, r.Error)
			}
		}
		docs = docs[:0]
	}
	for i := range n {
		docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("%s%05d", prefix, i), Body: json.RawMessage(fmt.Sprintf(`{"i":%d,"type":"t%d"}`, i, i%2))})
		if len(docs) == cap(docs) {
			flush()
		}
	}
	if len(docs) > 0 {
		flush()
	}
}

// Put writes one document to the store and returns its new rev.
func Put(t testing.TB, db *localdb.DB, id, rev, body string) string {
	t.Helper()
	r, err := db.Put(context.Background(), &couchdoc.Doc{ID: id, Rev: rev, Body: json.RawMessage(body)})
	if err != nil {
		t.Fatalf("put %s: %v", id, err)
	}
	return r
}

// RemoteDocCount returns the remote's doc_count and doc_del_count.
func RemoteDocCount(t testing.TB, dbURL string) (int64, int64) {
	t.Helper()
	var info struct {
		DocCount    int64 `json:"doc_count"`
		DocDelCount int64 `json:"doc_del_count"`
	}
	if st := testutil.DoJSON(context.Background(), t, "GET", dbURL, nil, &info); st != 200 {
		t.Fatalf("GET %s: %d", dbURL, st)
	}
	return info.DocCount, info.DocDelCount
}

// RemoteDoc is a remote document as GET ?conflicts=true returns it.
type RemoteDoc struct {
	ID        string         `json:"_id"`
	Rev       string         `json:"_rev"`
	Conflicts []string       `json:"_conflicts"`
	Deleted   bool           `json:"_deleted"`
	Error     string         `json:"error"`
	Reason    string         `json:"reason"`
	Atts      map[string]Att `json:"_attachments"`
}

// Att is an attachment stub of a RemoteDoc.
type Att struct {
	Digest string `json:"digest"`
	Length int64  `json:"length"`
}

// RemoteGet reads a remote document with its conflicts.
func RemoteGet(t testing.TB, dbURL, id string) (RemoteDoc, int) {
	t.Helper()
	var d RemoteDoc
	st := testutil.DoJSON(context.Background(), t, "GET", dbURL+"/"+wire.EscapeDocID(id)+"?conflicts=true", nil, &d)
	return d, st
}
