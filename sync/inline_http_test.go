package sync_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/synctest"
)

// TestHTTPTargetSmallAttachmentsInBulk: between two HTTP peers, documents
// with small attachment bodies go in _bulk_docs and only those past
// couch.InlineMax alone in a multipart PUT (a CouchDB cluster with a node
// down holds a multipart PUT open for minutes, not a _bulk_docs), and
// every body arrives intact.
func TestHTTPTargetSmallAttachmentsInBulk(t *testing.T) {
	src := servertest.Start(t, nil)
	tgt := servertest.Start(t, nil)
	su, tu := src.CreateDB(t, "src"), tgt.CreateDB(t, "tgt")
	sizes := map[string]int{"small": 100, "edge": couch.InlineMax, "big": couch.InlineMax + 1}
	for id, n := range sizes {
		req, _ := http.NewRequest("PUT", su+"/"+id+"/a.bin", bytes.NewReader(bytes.Repeat([]byte(id[:1]), n)))
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("attach %s: %v %v", id, resp, err)
		}
		resp.Body.Close()
	}
	cnt := &synctest.Counter{}
	if _, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Remote(t, su, nil), Target: synctest.Remote(t, tu, cnt)}); err != nil {
		t.Fatal(err)
	}
	if by := cnt.By(); by["PUT doc"] != 1 || by["POST _bulk_docs"] == 0 {
		t.Errorf("target requests %v: want the big document alone (one PUT), the others in _bulk_docs", by)
	}
	for id, n := range sizes {
		resp, err := http.Get(tu + "/" + id + "/a.bin")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != strings.Repeat(id[:1], n) {
			t.Errorf("%s: %d bytes arrived (%v), want %d", id, len(b), err, n)
		}
	}
}
