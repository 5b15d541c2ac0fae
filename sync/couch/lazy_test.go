package couch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/sync"
)

// ReadStubs asks for JSON with attachments=false (CouchDB puts bodies in
// any multipart answer), on _bulk_get or, without it, open_revs; and
// GetAttachment sends Range only past the start and tells a 206 from a 200.
func TestReadStubsAndGetAttachment(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Method+" "+r.URL.Path+" attachments="+r.URL.Query().Get("attachments")+" accept="+r.Header.Get("Accept")+" range="+r.Header.Get("Range"))
		switch {
		case strings.HasSuffix(r.URL.Path, "/_bulk_get"):
			w.WriteHeader(404)
			w.Write([]byte(`{"error":"not_found","reason":"missing"}`))
		case strings.HasSuffix(r.URL.Path, "/a"):
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"ok":{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"_attachments":{"t.txt":{"stub":true,"content_type":"text/plain","digest":"md5-x","length":5,"revpos":1,"encoding":"gzip","encoded_length":25}}}}]`))
		case r.Header.Get("Range") != "":
			w.Header().Set("Content-Range", "bytes 2-4/5")
			w.WriteHeader(206)
			w.Write([]byte("llo"))
		default:
			w.Write([]byte("hello"))
		}
	}))
	defer srv.Close()
	db := newTestDB(t, srv.URL+"/db", &Options{Retries: -1})
	var got []*couchdoc.Doc
	err := db.ReadStubs(context.Background(), []sync.BulkGetRequest{{ID: "a", Rev: "2-b", AttsSince: []string{"1-a"}}}, func(d *couchdoc.Doc, err error) error {
		if err != nil {
			return err
		}
		got = append(got, d)
		return nil
	})
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	if a := got[0].Attachments["t.txt"]; a == nil || !a.Stub || a.Encoding != "gzip" || a.Length != 5 || a.RevPos != 1 {
		t.Fatalf("stub %+v", a)
	}
	for _, s := range seen[:2] {
		if !strings.Contains(s, "attachments=false") || !strings.Contains(s, "accept=application/json ") {
			t.Fatalf("request %q", s)
		}
	}
	if strings.Contains(seen[1], "atts_since") {
		t.Fatalf("request %q", seen[1])
	}
	for _, c := range []struct {
		off    int64
		ranged bool
		body   string
		rng    string
	}{{0, false, "hello", "range="}, {2, true, "llo", "range=bytes=2-"}} {
		rc, ranged, err := db.GetAttachment(context.Background(), "d", "1-a", "t.txt", c.off)
		if err != nil {
			t.Fatal(err)
		}
		b := new(strings.Builder)
		_, err = io.Copy(b, rc)
		rc.Close()
		if err != nil || ranged != c.ranged || b.String() != c.body || !strings.HasSuffix(seen[len(seen)-1], c.rng) {
			t.Fatalf("offset %d: %q ranged %v, %v; request %q", c.off, b, ranged, err, seen[len(seen)-1])
		}
	}
}
