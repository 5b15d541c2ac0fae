package mobile

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/settee/settee/internal/testpeer"
)

// A lazy pull (ReplicatorConfig.Attachments) brings the document and the
// attachment's metadata; the app fetches the body when shown and evicts it.
func TestLazyAttachmentsMobile(t *testing.T) {
	srv := testpeer.PouchDB(t)
	url := srv.CreateDB(t, "hub")
	photo := bytes.Repeat([]byte("photo"), 40000)
	req, _ := http.NewRequest("PUT", url+"/p/photo.jpg", bytes.NewReader(photo))
	req.Header.Set("Content-Type", "image/jpeg")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("put attachment: %v %v", resp, err)
	}
	resp.Body.Close()

	d := openTest(t)
	cfg := NewReplicatorConfig(url)
	cfg.Direction = "pull"
	cfg.Attachments = "lazy"
	r := must(NewReplicator(d, cfg))
	rec := newRecorder()
	r.SetListener(rec)
	must(0, r.Start())
	if st := rec.waitState(t, "stopped"); st.LastError != "" || st.DocsWritten != 1 {
		t.Fatalf("lazy pull: %+v", st)
	}
	if ok := must(d.IsAttachmentDownloaded("p", "photo.jpg")); ok {
		t.Fatal("body downloaded by a lazy pull")
	}
	if st := mustJSON(t, must(d.Stats())); st["attachments_not_downloaded"] != 1.0 || st["attachment_bytes_not_downloaded"] != float64(len(photo)) {
		t.Fatalf("stats after a lazy pull: %v", st)
	}
	if _, err := d.GetAttachment("p", "", "photo.jpg"); err == nil || !strings.Contains(err.Error(), "not downloaded") {
		t.Fatalf("GetAttachment of a missing body: %v", err)
	}
	must(0, d.FetchAttachment(r, "p", "photo.jpg"))
	if got := must(d.GetAttachment("p", "", "photo.jpg")); !bytes.Equal(got, photo) {
		t.Fatalf("fetched %d bytes", len(got))
	}
	must(0, d.EvictAttachment("p", "photo.jpg"))
	if ok := must(d.IsAttachmentDownloaded("p", "photo.jpg")); ok {
		t.Fatal("evicted body still here")
	}
	// An edit pushed back to pouchdb-server (its revs_diff gives no
	// possible_ancestors): the evicted body is fetched first, then sent.
	doc := mustJSON(t, must(d.Get("p")))
	newRev := must(d.Put(`{"_id":"p","_rev":"` + doc["_rev"].(string) + `","v":2,"_attachments":{"photo.jpg":{"stub":true}}}`))
	pushCfg := NewReplicatorConfig(url)
	pushCfg.Direction = "push"
	push := must(NewReplicator(d, pushCfg))
	prec := newRecorder()
	push.SetListener(prec)
	must(0, push.Start())
	if st := prec.waitState(t, "stopped"); st.LastError != "" || st.DocsWritten != 1 || len(prec.docErrs) != 0 {
		t.Fatalf("push of an edit with an evicted body: %+v %v", st, prec.docErrs)
	}
	if remote := httpDo(t, "GET", url+"/p", ""); remote["_rev"] != newRev {
		t.Fatalf("remote after the push: %v", remote)
	}
	if ok := must(d.IsAttachmentDownloaded("p", "photo.jpg")); !ok {
		t.Fatal("the push did not fetch the body")
	}
	for _, bad := range []struct{ dir, att string }{{"pull", "sometimes"}, {"push", "lazy"}} {
		c := NewReplicatorConfig(url)
		c.Direction, c.Attachments = bad.dir, bad.att
		if _, err := NewReplicator(d, c); err == nil {
			t.Fatalf("%+v accepted", bad)
		}
	}
}
