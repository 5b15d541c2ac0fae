package localdb_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"io"
	"math/rand"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func digest(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func TestAttachmentsInlineStubsAndRevpos(t *testing.T) {
	db := open(t)
	data := []byte("hello world")
	r1, err := db.Put(bg, &couchdoc.Doc{ID: "d", Attachments: map[string]*couchdoc.Attachment{
		"a.txt": {ContentType: "text/plain", Data: data},
	}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := db.Get(bg, "d", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := doc.Attachments["a.txt"]
	if a == nil || !a.Stub || a.Digest != digest(data) || a.Length != 11 || a.RevPos != 1 || a.ContentType != "text/plain" {
		t.Fatalf("stub %+v", a)
	}
	// Edit keeping the attachment as a stub, adding another.
	r2, err := db.Put(bg, &couchdoc.Doc{ID: "d", Rev: r1, Body: []byte(`{"v":2}`), Attachments: map[string]*couchdoc.Attachment{
		"a.txt": {Stub: true},
		"b.bin": {Data: []byte{1, 2, 3}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	doc, _ = db.Get(bg, "d", localdb.GetOptions{Attachments: true})
	if doc.Attachments["a.txt"].RevPos != 1 || doc.Attachments["b.bin"].RevPos != 2 {
		t.Fatalf("revpos %+v %+v", doc.Attachments["a.txt"], doc.Attachments["b.bin"])
	}
	if !bytes.Equal(doc.Attachments["a.txt"].Data, data) {
		t.Fatalf("data %q", doc.Attachments["a.txt"].Data)
	}
	// atts_since r1: only b.bin (revpos 2 > 1) gets its bytes.
	doc, _ = db.Get(bg, "d", localdb.GetOptions{AttsSince: []string{r1}})
	if !doc.Attachments["a.txt"].Stub || doc.Attachments["b.bin"].Stub {
		t.Fatalf("atts_since: %+v %+v", doc.Attachments["a.txt"], doc.Attachments["b.bin"])
	}
	// A stub the parent does not have.
	_, err = db.Put(bg, &couchdoc.Doc{ID: "d", Rev: r2, Attachments: map[string]*couchdoc.Attachment{"zzz": {Stub: true}}})
	wantErr(t, err, couchdoc.ErrMissingStub)
	// Dropping attachments by omitting them.
	r3 := put(t, db, "d", r2, `{}`)
	doc, _ = db.Get(bg, "d", localdb.GetOptions{})
	if len(doc.Attachments) != 0 {
		t.Fatalf("attachments after drop: %v", doc.Attachments)
	}
	// The old revision still reads.
	att, rc, err := db.OpenAttachment(bg, "d", r2, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, data) || att.Length != 11 {
		t.Fatalf("open attachment %q", got)
	}
	_, _, err = db.OpenAttachment(bg, "d", r3, "a.txt")
	wantErr(t, err, couchdoc.ErrNotFound)
}

func TestAttachmentStreamedLargeAndDigestMismatch(t *testing.T) {
	db := open(t)
	big := make([]byte, 1<<20+17) // several chunks
	rand.New(rand.NewSource(1)).Read(big)
	r1, err := db.Put(bg, &couchdoc.Doc{ID: "big", Attachments: map[string]*couchdoc.Attachment{
		"blob": {ContentType: "application/octet-stream", Body: bytes.NewReader(big), Digest: digest(big), Length: int64(len(big))},
	}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := db.Get(bg, "big", localdb.GetOptions{Attachments: true})
	if err != nil {
		t.Fatal(err)
	}
	a := doc.Attachments["blob"]
	if a.Body == nil || a.Data != nil {
		t.Fatalf("a large attachment should stream: %+v", a)
	}
	got, err := io.ReadAll(a.Body)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("streamed %d bytes, err %v", len(got), err)
	}
	// Wrong digest: nothing is written, the batch goes on.
	info, _ := db.Info(bg)
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{
		{ID: "bad", Attachments: map[string]*couchdoc.Attachment{"x": {Body: bytes.NewReader([]byte("abc")), Digest: digest([]byte("abd"))}}},
		{ID: "bad2", Attachments: map[string]*couchdoc.Attachment{"x": {Body: bytes.NewReader([]byte("abc")), Length: 4}}},
		{ID: "good", Body: []byte(`{}`)},
	}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Error != "bad_request" || res[1].Error != "bad_request" || !res[2].OK {
		t.Fatalf("results %+v", res)
	}
	info2, _ := db.Info(bg)
	if info2.UpdateSeq != info.UpdateSeq+1 {
		t.Fatalf("seq %d -> %d", info.UpdateSeq, info2.UpdateSeq)
	}
	// Same content in another doc is stored once; compaction keeps it while
	// referenced.
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "big2", Attachments: map[string]*couchdoc.Attachment{"copy": {Data: big}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Delete(bg, "big", r1); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	_, rc, err := db.OpenAttachment(bg, "big2", "", "copy")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, big) {
		t.Fatal("content lost by compaction")
	}
}

func TestReplicatedAttachmentStubFromAncestor(t *testing.T) {
	db := open(t)
	data := []byte("payload")
	d1 := replDoc(t, "d", false, `{}`, "1-a")
	d1.Attachments = map[string]*couchdoc.Attachment{"f": {Data: data, RevPos: 1}}
	d3 := replDoc(t, "d", false, `{"v":3}`, "3-c", "2-b", "1-a")
	d3.Attachments = map[string]*couchdoc.Attachment{"f": {Stub: true, RevPos: 1, Digest: digest(data), Length: 7}}
	d4 := replDoc(t, "e", false, `{}`, "2-b", "1-a")
	d4.Attachments = map[string]*couchdoc.Attachment{"f": {Stub: true, RevPos: 1}}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{d1, d3, d4}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].OK || !res[1].OK || res[2].Error != "missing_stub" {
		t.Fatalf("results %+v", res)
	}
	doc, _ := db.Get(bg, "d", localdb.GetOptions{Attachments: true})
	if a := doc.Attachments["f"]; a == nil || !bytes.Equal(a.Data, data) || a.RevPos != 1 {
		t.Fatalf("attachment %+v", a)
	}
}

func TestCompactDropsOldBodies(t *testing.T) {
	db := open(t)
	r1, err := db.Put(bg, &couchdoc.Doc{ID: "d", Attachments: map[string]*couchdoc.Attachment{"x": {Data: []byte("old")}}})
	if err != nil {
		t.Fatal(err)
	}
	r2 := put(t, db, "d", r1, `{"v":2}`)
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	_, err = db.Get(bg, "d", localdb.GetOptions{Rev: r1})
	wantErr(t, err, couchdoc.ErrNotFound)
	doc, err := db.Get(bg, "d", localdb.GetOptions{Revs: true, RevsInfo: true})
	if err != nil || doc.Rev != r2 || len(doc.Revisions.IDs) != 2 || doc.RevsInfo[1].Status != "missing" {
		t.Fatalf("after compact %+v %v", doc, err)
	}
}

func TestCompactStemsToLoweredLimit(t *testing.T) {
	db := open(t)
	rev := ""
	for i := 0; i < 5; i++ {
		rev = put(t, db, "d", rev, `{}`)
	}
	before, _ := db.Info(bg)
	if err := db.SetRevsLimit(bg, 2); err != nil {
		t.Fatal(err)
	}
	// As CouchDB's set_revs_limit, the change moves the update seq once.
	info, _ := db.Info(bg)
	if info.UpdateSeq != before.UpdateSeq+1 {
		t.Fatalf("revs_limit change: update seq %d -> %d", before.UpdateSeq, info.UpdateSeq)
	}
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	doc, _ := db.Get(bg, "d", localdb.GetOptions{Revs: true})
	if doc.Rev != rev || len(doc.Revisions.IDs) != 2 {
		t.Fatalf("after compact: %s %+v", doc.Rev, doc.Revisions)
	}
	if info2, _ := db.Info(bg); info2.UpdateSeq != info.UpdateSeq {
		t.Fatalf("compaction changed the update seq")
	}
}

// CouchDB digests compressible attachments after gzipping them, so a
// replicated attachment's stated digest may not be the md5 of its bytes:
// replicated writes accept that (keeping their own md5) but still check the
// length; local edits are strict. Stubs match by name and revpos.
func TestReplicatedDigestFromCouchDB(t *testing.T) {
	db := open(t)
	data := []byte("some text")
	couchDigest := "md5-cCkGbCesb17xjWYNV0GXmg==" // not the md5 of data
	d := replDoc(t, "d", false, `{}`, "1-a")
	d.Attachments = map[string]*couchdoc.Attachment{"t.txt": {ContentType: "text/plain", Body: bytes.NewReader(data), Digest: couchDigest, Length: int64(len(data)), RevPos: 1}}
	bad := replDoc(t, "e", false, `{}`, "1-a")
	bad.Attachments = map[string]*couchdoc.Attachment{"t.txt": {Body: bytes.NewReader(data), Length: 99, RevPos: 1}}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{d, bad}, false)
	if err != nil || !res[0].OK || res[1].Error != "bad_request" {
		t.Fatalf("%+v %v", res, err)
	}
	doc, _ := db.Get(bg, "d", localdb.GetOptions{Attachments: true})
	if a := doc.Attachments["t.txt"]; a.Digest != digest(data) || !bytes.Equal(a.Data, data) {
		t.Fatalf("attachment %+v", a)
	}
	// A later revision's stub (by name, same revpos) resolves.
	d2 := replDoc(t, "d", false, `{"v":2}`, "2-b", "1-a")
	d2.Attachments = map[string]*couchdoc.Attachment{"t.txt": {Stub: true, Digest: couchDigest, RevPos: 1}}
	// A stub claiming newer content (revpos 3) than we hold does not.
	d3 := replDoc(t, "d", false, `{"v":3}`, "3-c", "2-b", "1-a")
	d3.Attachments = map[string]*couchdoc.Attachment{"t.txt": {Stub: true, Digest: couchDigest, RevPos: 3}}
	res, err = db.BulkDocs(bg, []*couchdoc.Doc{d2, d3}, false)
	if err != nil || !res[0].OK || res[1].Error != "missing_stub" {
		t.Fatalf("%+v %v", res, err)
	}
	// Local edits are strict about digests.
	_, err = db.Put(bg, &couchdoc.Doc{ID: "f", Attachments: map[string]*couchdoc.Attachment{"x": {Data: data, Digest: couchDigest}}})
	wantErr(t, err, couchdoc.ErrDigestMismatch)
}
