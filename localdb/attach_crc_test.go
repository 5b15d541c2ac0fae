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

// TestChunkChecksums damages one stored chunk of a streamed attachment and
// one of a small (inline) one: both reads fail with ErrDigestMismatch
// instead of returning the changed bytes, and the streamed body says it
// checks its content itself (package wire then sums no md5). Without
// checksums (a store written before schema 9) the bytes read back as they
// are and the body does not claim to check them. CheckInvariants reports
// damaged chunks.
func TestChunkChecksums(t *testing.T) {
	db := open(t)
	big := randomBytes(2*chunk+chunk/2, 2) // three chunks
	small := []byte("a small attachment, read whole")
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "a", Attachments: map[string]*couchdoc.Attachment{
		"big":   {ContentType: "application/octet-stream", Data: big},
		"small": {ContentType: "text/plain", Data: small},
	}}); err != nil {
		t.Fatal(err)
	}
	read := func(name string) ([]byte, bool, error) {
		t.Helper()
		doc, err := db.Get(bg, "a", localdb.GetOptions{Attachments: true})
		if err != nil {
			return nil, false, err
		}
		a := doc.Attachments[name]
		if a.Body == nil {
			return a.Data, false, nil
		}
		if c, ok := a.Body.(io.Closer); ok {
			defer c.Close()
		}
		sv, ok := a.Body.(interface{ VerifiesContent() bool })
		got, err := io.ReadAll(a.Body)
		return got, ok && sv.VerifiesContent(), err
	}
	got, checks, err := read("big")
	if err != nil || !bytes.Equal(got, big) || !checks {
		t.Fatalf("intact: %d bytes, checks itself %v, %v", len(got), checks, err)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
	doc, _ := db.Get(bg, "a", localdb.GetOptions{})
	bigDigest, smallDigest := doc.Attachments["big"].Digest, doc.Attachments["small"].Digest
	if err := db.DamageChunk(bg, bigDigest, 1); err != nil {
		t.Fatal(err)
	}
	if err := db.DamageChunk(bg, smallDigest, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckInvariants(bg); err == nil || !strings.Contains(err.Error(), "2 attachment chunks do not match their checksum") {
		t.Fatalf("CheckInvariants on damaged chunks: %v", err)
	}
	if _, _, err := read("big"); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("damaged streamed chunk read with %v, want ErrDigestMismatch", err)
	}
	if _, _, err := read("small"); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("damaged inline chunk read with %v, want ErrDigestMismatch", err)
	}
	if err := db.DropChunkCRCs(bg); err != nil {
		t.Fatal(err)
	}
	got, checks, err = read("big")
	if err != nil || len(got) != len(big) || bytes.Equal(got, big) || checks {
		t.Fatalf("without checksums: %d bytes (changed: %v), checks itself %v, %v", len(got), !bytes.Equal(got, big), checks, err)
	}
}
