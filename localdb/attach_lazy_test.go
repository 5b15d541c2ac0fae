package localdb_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// lazyDoc is a replicated revision 1-a of id whose attachments are stubs
// with the metadata of data.
func lazyDoc(id string, atts map[string][]byte) *couchdoc.Doc {
	d := &couchdoc.Doc{ID: id, Rev: "1-a", Body: []byte(`{"v":1}`), Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"a"}},
		Attachments: map[string]*couchdoc.Attachment{}}
	for n, b := range atts {
		d.Attachments[n] = &couchdoc.Attachment{ContentType: "image/png", Digest: digest(b), Length: int64(len(b)), RevPos: 1, Stub: true}
	}
	return d
}

func readAtt(t *testing.T, db *localdb.DB, id, name string) ([]byte, error) {
	t.Helper()
	_, rc, err := db.OpenAttachment(bg, id, "", name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func checkInv(t *testing.T, db *localdb.DB) {
	t.Helper()
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

func TestLazyStubsRecordedMissing(t *testing.T) {
	db := open(t)
	photo := bytes.Repeat([]byte("photo"), 100000)
	thumb := []byte("thumb")
	doc := lazyDoc("p", map[string][]byte{"photo.png": photo, "thumb.png": thumb})
	// The normal replicated path still refuses stubs it cannot resolve.
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{doc}, false)
	if err != nil || !errors.Is(res[0].Err(), couchdoc.ErrMissingStub) {
		t.Fatalf("plain write of unknown stubs: %+v %v", res, err)
	}
	res, err = db.BulkDocsLazy(bg, []*couchdoc.Doc{doc})
	if err != nil || res[0].Err() != nil {
		t.Fatalf("lazy write: %+v %v", res, err)
	}
	checkInv(t, db)
	if st, err := db.Stats(bg); err != nil || st.Attachments != 0 || st.NotDownloaded != 2 || st.NotDownloadedBytes != int64(len(photo)+len(thumb)) {
		t.Fatalf("stats of missing bodies: %+v %v", st, err)
	}
	sizes, err := db.Sizes(bg)
	if err != nil || sizes.External > 100 {
		t.Fatalf("sizes count bytes not stored: %+v %v", sizes, err)
	}
	// Asking for bodies gives stubs marked NotDownloaded, with metadata.
	got, err := db.Get(bg, "p", localdb.GetOptions{Attachments: true})
	if err != nil {
		t.Fatal(err)
	}
	a := got.Attachments["photo.png"]
	if !a.Stub || !a.NotDownloaded || a.Data != nil || a.Body != nil || a.Length != int64(len(photo)) || a.Digest != digest(photo) || a.RevPos != 1 {
		t.Fatalf("missing body read as %+v", a)
	}
	_, err = readAtt(t, db, "p", "photo.png")
	if !errors.Is(err, localdb.ErrAttachmentNotDownloaded) || errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("open missing body: %v", err)
	}
	if _, err := readAtt(t, db, "p", "nope"); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("open unknown attachment: %v", err)
	}
	// Wrong bytes are refused and change nothing.
	err = db.FillAttachment(bg, "p", "photo.png", bytes.NewReader(bytes.Repeat([]byte("PHOTO"), 100000)))
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("fill with wrong bytes: %v", err)
	}
	if err := db.FillAttachment(bg, "p", "photo.png", strings.NewReader("short")); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("fill with short bytes: %v", err)
	}
	if _, err := readAtt(t, db, "p", "photo.png"); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		t.Fatalf("after refused fills: %v", err)
	}
	checkInv(t, db)
	before := updateSeq(t, db)
	if err := db.FillAttachment(bg, "p", "photo.png", bytes.NewReader(photo)); err != nil {
		t.Fatal(err)
	}
	// The document is listed again in the changes feed, same revision.
	if after := updateSeq(t, db); after != before+1 {
		t.Fatalf("update seq %d after a fill, was %d", after, before)
	}
	var last *localdb.Change
	if _, err := db.Changes(bg, localdb.ChangesOptions{Since: before}, func(c *localdb.Change) error { last = c; return nil }); err != nil || last == nil || last.ID != "p" || last.Revs[0] != "1-a" {
		t.Fatalf("changes after a fill: %+v %v", last, err)
	}
	if b, err := readAtt(t, db, "p", "photo.png"); err != nil || !bytes.Equal(b, photo) {
		t.Fatalf("after fill: %d bytes, %v", len(b), err)
	}
	if st, err := db.Stats(bg); err != nil || st.Attachments != 1 || st.NotDownloaded != 1 || st.NotDownloadedBytes != int64(len(thumb)) {
		t.Fatalf("stats after a fill: %+v %v", st, err)
	}
	if _, err := readAtt(t, db, "p", "thumb.png"); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		t.Fatalf("other attachment: %v", err)
	}
	checkInv(t, db)
	// A local edit keeping the missing attachment as a stub keeps it missing.
	r2, err := db.Put(bg, &couchdoc.Doc{ID: "p", Rev: "1-a", Body: []byte(`{"v":2}`), Attachments: map[string]*couchdoc.Attachment{
		"photo.png": {Stub: true}, "thumb.png": {Stub: true}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Attachment(bg, "p", "thumb.png")
	if err != nil || st.Downloaded || st.Rev != r2 || st.Attachment.RevPos != 1 {
		t.Fatalf("edited: %+v %v", st, err)
	}
	checkInv(t, db)
	// Evicting drops the bytes, keeps the metadata; twice is fine.
	for range 2 {
		if err := db.EvictAttachment(bg, "p", "photo.png"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := readAtt(t, db, "p", "photo.png"); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		t.Fatalf("after evict: %v", err)
	}
	if st, err := db.Attachment(bg, "p", "photo.png"); err != nil || st.Downloaded || st.Attachment.Length != int64(len(photo)) {
		t.Fatalf("evicted state %+v %v", st, err)
	}
	if err := db.EvictAttachment(bg, "p", "nope"); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("evict unknown: %v", err)
	}
	checkInv(t, db)
	if sizes, err := db.Sizes(bg); err != nil || sizes.External > 100 {
		t.Fatalf("sizes after evict: %+v %v", sizes, err)
	}
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	checkInv(t, db)
	if err := db.FillAttachment(bg, "p", "photo.png", bytes.NewReader(photo)); err != nil {
		t.Fatal(err)
	}
	if b, err := readAtt(t, db, "p", "photo.png"); err != nil || !bytes.Equal(b, photo) {
		t.Fatalf("after second fill: %d bytes, %v", len(b), err)
	}
	checkInv(t, db)
}

func TestLazySharedDigest(t *testing.T) {
	db := open(t)
	data := []byte("shared bytes")
	// Held by a local document: a lazy stub of that digest is there at once.
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "held", Attachments: map[string]*couchdoc.Attachment{"x": {Data: data}}}); err != nil {
		t.Fatal(err)
	}
	if res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{lazyDoc("lazy", map[string][]byte{"y": data})}); err != nil || res[0].Err() != nil {
		t.Fatalf("%+v %v", res, err)
	}
	if b, err := readAtt(t, db, "lazy", "y"); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("shared content: %q %v", b, err)
	}
	// Evicting one holder keeps the bytes the other holds.
	if err := db.EvictAttachment(bg, "lazy", "y"); err != nil {
		t.Fatal(err)
	}
	if b, err := readAtt(t, db, "held", "x"); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("other holder after evict: %q %v", b, err)
	}
	checkInv(t, db)
	if err := db.EvictAttachment(bg, "held", "x"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"held", "lazy"} {
		if _, err := readAtt(t, db, id, map[string]string{"held": "x", "lazy": "y"}[id]); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
			t.Fatalf("%s after both evicted: %v", id, err)
		}
	}
	checkInv(t, db)
	// Bytes arriving with an eager write serve every attachment naming them.
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "again", Attachments: map[string]*couchdoc.Attachment{"z": {Data: data}}}); err != nil {
		t.Fatal(err)
	}
	if b, err := readAtt(t, db, "lazy", "y"); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("after eager write of the same bytes: %q %v", b, err)
	}
	checkInv(t, db)
}

func TestLazyGzipDigest(t *testing.T) {
	db := open(t)
	text := []byte("some text CouchDB keeps gzipped")
	d := lazyDoc("g", nil)
	// CouchDB states a gzip-stored attachment's digest over the gzip bytes.
	d.Attachments["t.txt"] = &couchdoc.Attachment{ContentType: "text/plain", Digest: "md5-AAAAAAAAAAAAAAAAAAAAAA==", Length: int64(len(text)), RevPos: 1, Stub: true, Encoding: "gzip"}
	if res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{d}); err != nil || res[0].Err() != nil {
		t.Fatalf("%+v %v", res, err)
	}
	st, err := db.Attachment(bg, "g", "t.txt")
	if err != nil || st.Downloaded || st.Attachment.Encoding != "gzip" {
		t.Fatalf("%+v %v", st, err)
	}
	if err := db.FillAttachment(bg, "g", "t.txt", bytes.NewReader(text)); err != nil {
		t.Fatal(err)
	}
	st, err = db.Attachment(bg, "g", "t.txt")
	if err != nil || !st.Downloaded || st.Attachment.Digest != digest(text) || st.Attachment.Encoding != "" {
		t.Fatalf("after fill: %+v %v", st.Attachment, err)
	}
	checkInv(t, db)
}

func TestLazyStubNeedsDigest(t *testing.T) {
	db := open(t)
	d := lazyDoc("n", nil)
	d.Attachments["a"] = &couchdoc.Attachment{Length: 3, RevPos: 1, Stub: true}
	res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{d})
	if err != nil || !errors.Is(res[0].Err(), couchdoc.ErrMissingStub) {
		t.Fatalf("%+v %v", res, err)
	}
	checkInv(t, db)
}
