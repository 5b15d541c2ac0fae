package couch

import (
	"context"
	"net/http"
	"net/http/httptest"
	gosync "sync"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/sync"
)

// TestNeverAsksForGzip: answers are parsed and acted upon as they stream,
// and a gzip body's CRC-32 is only checked after its last byte, so a body
// corrupted in transit would be used before the error shows. Every request
// asks for identity encoding.
func TestNeverAsksForGzip(t *testing.T) {
	var mu gosync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+": "+r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/db":
			w.Write([]byte(`{"db_name":"db","update_seq":1}`))
		case "/db/_changes":
			w.Write([]byte(`{"results":[{"seq":1,"id":"a","changes":[{"rev":"1-a"}]}],"last_seq":1}`))
		case "/db/_revs_diff":
			w.Write([]byte(`{}`))
		case "/db/_bulk_get":
			w.Write([]byte(`{"results":[]}`))
		default:
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"not_found","reason":"missing"}`))
		}
	}))
	defer srv.Close()
	db, err := New(srv.URL+"/db", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Changes(ctx, sync.ChangesOptions{}, func(*couchdoc.Change) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevsDiff(ctx, map[string][]string{"a": {"1-a"}}); err != nil {
		t.Fatal(err)
	}
	_ = db.BulkGet(ctx, []sync.BulkGetRequest{{ID: "a", Rev: "1-a"}}, func(*couchdoc.Doc, error) error { return nil })
	_, _ = db.GetLocal(ctx, "x")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 5 {
		t.Fatalf("only %d requests: %v", len(seen), seen)
	}
	for _, s := range seen {
		if s[len(s)-len(": identity"):] != ": identity" {
			t.Errorf("request does not ask for identity encoding: %s", s)
		}
	}
}
