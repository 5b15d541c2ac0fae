package localdb_test

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// TestStagedChunksStay writes a streamed body (staged in transactions of
// its own before its document's) and checks that its content keeps the
// chunks where staging put them, named by att_content.chunks, instead of
// renaming them to the digest (a rename rewrote every byte, and inside the
// document's savepoint held a copy of each page in memory: a 200-MB
// attachment pulled with 442 MB of RSS). The bytes read back and survive
// a compaction; a refused document's staged chunks go at once; an eviction
// drops the chunks and the key; and the chunks go with the content when no
// revision names it any more.
func TestStagedChunksStay(t *testing.T) {
	db := open(t)
	big := make([]byte, 700<<10) // three chunks
	rand.New(rand.NewSource(3)).Read(big)
	rev, err := db.Put(bg, &couchdoc.Doc{ID: "s", Attachments: map[string]*couchdoc.Attachment{
		"blob": {ContentType: "application/octet-stream", Body: bytes.NewReader(big), Digest: digest(big), Length: int64(len(big))}}})
	if err != nil {
		t.Fatal(err)
	}
	chunks, named, err := db.ChunkKeys(bg)
	if err != nil {
		t.Fatal(err)
	}
	key := named[digest(big)]
	if !strings.HasPrefix(key, "tmp-") || chunks[key] != 3 || len(chunks) != 1 {
		t.Fatalf("content names key %q; chunks per key %v", key, chunks)
	}
	check := func(when string) {
		t.Helper()
		_, rc, err := db.OpenAttachment(bg, "s", "", "blob")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("%s: read %d bytes, %v", when, len(got), err)
		}
		if err := db.CheckInvariants(bg); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	check("after the write")
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	check("after a compaction")
	// A document refused after its body was staged leaves nothing.
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{{ID: "bad", Attachments: map[string]*couchdoc.Attachment{
		"x": {Body: bytes.NewReader(big[:1000]), Digest: digest(big[1:1001])}}}}, true)
	if err != nil || res[0].Error == "" {
		t.Fatalf("mismatched digest: %+v, %v", res, err)
	}
	if chunks, _, _ = db.ChunkKeys(bg); len(chunks) != 1 {
		t.Fatalf("after a refused body, chunks per key %v", chunks)
	}
	// Evicted, then the document written again with the same bytes.
	if err := db.EvictAttachment(bg, "s", "blob"); err != nil {
		t.Fatal(err)
	}
	if chunks, named, _ = db.ChunkKeys(bg); len(chunks) != 0 || len(named) != 0 {
		t.Fatalf("after an eviction: chunks %v, named %v", chunks, named)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
	if rev, err = db.Put(bg, &couchdoc.Doc{ID: "s", Rev: rev, Attachments: map[string]*couchdoc.Attachment{
		"blob": {ContentType: "application/octet-stream", Body: bytes.NewReader(big), Digest: digest(big), Length: int64(len(big))}}}); err != nil {
		t.Fatal(err)
	}
	check("written again")
	if _, err := db.Delete(bg, "s", rev); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	chunks, named, err = db.ChunkKeys(bg)
	if err != nil || len(chunks) != 0 || len(named) != 0 {
		t.Fatalf("after deleting the document and compacting: chunks %v, named %v, %v", chunks, named, err)
	}
	if _, err := db.Get(bg, "s", localdb.GetOptions{}); err == nil {
		t.Fatal("deleted document still readable")
	}
}
