package couch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

// BenchmarkBulkGet fetches 100 documents with a 4 KiB attachment each per
// request, answered as CouchDB 3's multipart/mixed and as JSON.
func BenchmarkBulkGet(b *testing.B) {
	const docs = 100
	att := bytes.Repeat([]byte("abcd"), 1024)
	mk := func(i int) *couchdoc.Doc {
		d := newDoc(fmt.Sprintf("doc-%04d", i), 1, 'a', `{"n":1,"text":"some words in a document"}`)
		d.Attachments = map[string]*couchdoc.Attachment{"a.bin": {ContentType: "application/octet-stream", Data: att, Digest: digest(att), Length: int64(len(att)), RevPos: 1}}
		return d
	}
	var mixed bytes.Buffer
	mw := wire.NewMixedWriter(&mixed)
	var js bytes.Buffer
	js.WriteString(`{"results":[`)
	for i := 0; i < docs; i++ {
		d := mk(i)
		if err := mw.WriteDoc(d); err != nil {
			b.Fatal(err)
		}
		if i > 0 {
			js.WriteByte(',')
		}
		dj, _ := d.MarshalJSON()
		fmt.Fprintf(&js, `{"id":%q,"docs":[{"ok":%s}]}`, d.ID, dj)
	}
	mw.Close()
	js.WriteString(`]}`)
	reqs := make([]sync.BulkGetRequest, docs)
	for i := range reqs {
		reqs[i] = sync.BulkGetRequest{ID: fmt.Sprintf("doc-%04d", i), Rev: "1-" + hash('a')}
	}
	for _, form := range []string{"multipart", "json"} {
		b.Run(form, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if form == "multipart" {
					w.Header().Set("Content-Type", mw.ContentType())
					w.Write(mixed.Bytes())
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(js.Bytes())
			}))
			defer srv.Close()
			db, _ := New(srv.URL+"/db", nil)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := 0
				err := db.BulkGet(ctx, reqs, func(d *couchdoc.Doc, _ error) error {
					n++
					if a := d.Attachments["a.bin"]; a.Body != nil {
						_, err := io.Copy(io.Discard, a.Body)
						return err
					}
					return nil
				})
				if err != nil || n != docs {
					b.Fatal(err, n)
				}
			}
			b.ReportMetric(float64(docs*b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}
