package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	gosync "sync"
	"testing"
)

// BulkDocsCounter is a reverse proxy in front of a CouchDB-compatible
// server that watches the _bulk_docs requests going through it: which
// revisions were sent at all, and how many times the server acknowledged
// each (a replicator that writes again what the target confirmed shows,
// even when it was killed before it read the confirmation). A batch whose
// sender went away before the server answered it may or may not be
// stored: sending it again is right, and only the acknowledgements count.
type BulkDocsCounter struct {
	// URL is the proxy's root, with the target's credentials.
	URL   string
	mu    gosync.Mutex
	sent  map[string]bool
	acked map[string]int
}

type bulkDocsKey struct{}

// NewBulkDocsCounter starts a counting proxy to target (a server root,
// credentials in it kept for URL), closed when the test ends.
func NewBulkDocsCounter(t testing.TB, target string) *BulkDocsCounter {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &BulkDocsCounter{sent: map[string]bool{}, acked: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.ModifyResponse = func(resp *http.Response) error {
		revs, _ := resp.Request.Context().Value(bulkDocsKey{}).([]string)
		if resp.StatusCode/100 == 2 && len(revs) > 0 {
			c.mu.Lock()
			for _, k := range revs {
				c.acked[k]++
			}
			c.mu.Unlock()
		}
		return nil
	}
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/_bulk_docs") {
			body, _ := io.ReadAll(r.Body)
			var req struct {
				Docs []struct {
					ID  string `json:"_id"`
					Rev string `json:"_rev"`
				} `json:"docs"`
			}
			_ = json.Unmarshal(body, &req)
			revs := make([]string, len(req.Docs))
			c.mu.Lock()
			for i, d := range req.Docs {
				revs[i] = d.ID + " " + d.Rev
				c.sent[revs[i]] = true
			}
			c.mu.Unlock()
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			r = r.WithContext(context.WithValue(r.Context(), bulkDocsKey{}, revs))
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	c.URL = ps.URL
	if u.User != nil {
		c.URL = strings.Replace(ps.URL, "http://", "http://"+u.User.String()+"@", 1)
	}
	return c
}

// Counts returns how many revisions were sent, and how many the server
// acknowledged more than once.
func (c *BulkDocsCounter) Counts() (revs, again int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.acked {
		if n > 1 {
			again++
		}
	}
	return len(c.sent), again
}

// Twice lists the revisions the server acknowledged more than once ("id
// rev (n times)").
func (c *BulkDocsCounter) Twice() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, n := range c.acked {
		if n > 1 {
			out = append(out, fmt.Sprintf("%s (%d times)", k, n))
		}
	}
	return out
}
