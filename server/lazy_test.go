package server

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// A body the store lacks (lazy attachments) is a 404 not_found for an
// attachment GET, and a stub in documents read with their attachments
// (JSON, open_revs and _bulk_get multipart): never a wrong or empty body.
func TestLazyAttachmentNotDownloaded(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	db, err := ts.s.dbs.get(context.Background(), "db")
	if err != nil {
		t.Fatal(err)
	}
	photo := bytes.Repeat([]byte("x"), 100<<10)
	here := []byte("here")
	doc := &couchdoc.Doc{ID: "p", Rev: "1-a", Body: []byte(`{}`), Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"a"}},
		Attachments: map[string]*couchdoc.Attachment{
			"photo.jpg": {ContentType: "image/jpeg", Digest: md5Digest(photo), Length: int64(len(photo)), RevPos: 1, Stub: true},
			"here.txt":  {ContentType: "text/plain", Data: here, RevPos: 1},
		}}
	if res, err := db.BulkDocsLazy(context.Background(), []*couchdoc.Doc{doc}); err != nil || res[0].Err() != nil {
		t.Fatalf("%+v %v", res, err)
	}
	ts.wantError(404, "not_found", "GET", "/db/p/photo.jpg", nil)
	if r := ts.do("GET", "/db/p/photo.jpg", nil); !strings.Contains(string(r.body), "not downloaded") {
		t.Fatalf("reason: %s", r.body)
	}
	ts.wantError(404, "not_found", "GET", "/db/p/photo.jpg", nil, "Range", "bytes=10-")
	if r := ts.must(200, "GET", "/db/p/here.txt", nil); string(r.body) != "here" {
		t.Fatalf("present attachment: %q", r.body)
	}
	check := func(what string, d *couchdoc.Doc) {
		t.Helper()
		p, h := d.Attachments["photo.jpg"], d.Attachments["here.txt"]
		if p == nil || !p.Stub || p.Data != nil || p.Body != nil || p.Length != int64(len(photo)) || p.Digest != md5Digest(photo) {
			t.Fatalf("%s: missing body as %+v", what, p)
		}
		if h == nil || h.Stub || (h.Data == nil && h.Body == nil) {
			t.Fatalf("%s: present body as %+v", what, h)
		}
	}
	r := ts.must(200, "GET", "/db/p?attachments=true", nil)
	d, err := couchdoc.ParseDoc(r.body)
	if err != nil {
		t.Fatal(err)
	}
	check("attachments=true", d)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/db/p?open_revs=all&attachments=true&revs=true", ""},
		{"POST", "/db/_bulk_get?revs=true&attachments=true", `{"docs":[{"id":"p","rev":"1-a"}]}`},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		r := ts.must(200, c.method, c.path, body, "Accept", "multipart/mixed")
		n := 0
		err := wire.ReadDocs(bytes.NewReader(r.body), r.header.Get("Content-Type"), func(d *couchdoc.Doc, revErr error) error {
			if revErr != nil {
				return revErr
			}
			n++
			check(c.path, d)
			return nil
		})
		if err != nil || n != 1 {
			t.Fatalf("%s: %d docs, %v", c.path, n, err)
		}
	}
}
