package localdb_test

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// TestSlowUploadDoesNotBlockWriters: a streamed attachment is read outside
// the document's transaction, so other writes go on while it arrives.
func TestSlowUploadDoesNotBlockWriters(t *testing.T) {
	db := open(t)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := db.Put(bg, &couchdoc.Doc{ID: "upload", Attachments: map[string]*couchdoc.Attachment{"big": {Body: pr}}})
		done <- err
	}()
	if _, err := pw.Write(bytes.Repeat([]byte("x"), 3<<20)); err != nil { // the upload is under way
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := db.Put(bg, &couchdoc.Doc{ID: "other", Body: []byte(`{}`)})
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second): // a deadlock guard, not a speed assertion
		t.Fatal("a write waited for a pending upload")
	}
	pw.Write([]byte("tail"))
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, rc, err := db.OpenAttachment(bg, "upload", "", "big")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, rc)
	rc.Close()
	if n != 3<<20+4 {
		t.Fatalf("read back %d bytes", n)
	}
}

// TestRefusedUploadLeavesNoChunks: the bytes of a document that is refused
// (conflict, digest mismatch) or of a failed read do not stay in the file.
func TestRefusedUploadLeavesNoChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put(t, db, "taken", "", `{}`)
	body := func() io.Reader { return bytes.NewReader(bytes.Repeat([]byte("y"), 600<<10)) }
	_, err = db.Put(bg, &couchdoc.Doc{ID: "taken", Attachments: map[string]*couchdoc.Attachment{"a": {Body: body()}}})
	wantErr(t, err, couchdoc.ErrConflict)
	_, err = db.Put(bg, &couchdoc.Doc{ID: "x", Attachments: map[string]*couchdoc.Attachment{"a": {Body: body(), Length: 1}}})
	wantErr(t, err, couchdoc.ErrDigestMismatch)
	_, err = db.Put(bg, &couchdoc.Doc{ID: "y", Attachments: map[string]*couchdoc.Attachment{"a": {Body: io.MultiReader(body(), errReader{})}}})
	if err == nil {
		t.Fatal("a failing body was accepted")
	}
	raw, err := sql.Open("sqlite", localdb.RawDSN("file:"+path+"?mode=ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow("SELECT COUNT(*) FROM att_chunks").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d chunks left behind", n)
	}
	if info, _ := db.Info(bg); info.DocCount != 1 {
		t.Fatalf("info %+v", info)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestCloseWaitsForUpload: Close lets a write in flight, upload included,
// finish.
func TestCloseWaitsForUpload(t *testing.T) {
	db, err := localdb.Open(filepath.Join(t.TempDir(), "x.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := db.Put(bg, &couchdoc.Doc{ID: "upload", Attachments: map[string]*couchdoc.Attachment{"a": {Body: pr}}})
		done <- err
	}()
	pw.Write(bytes.Repeat([]byte("z"), 2<<20))
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	for i := 0; i < 3; i++ {
		pw.Write(bytes.Repeat([]byte("z"), 1<<20))
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatalf("write in flight during Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "late"}); !errors.Is(err, localdb.ErrClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
}

// TestCompactSparesUploadInFlight: Compact, which drops chunks of no
// content, must not drop those of an upload still being staged.
func TestCompactSparesUploadInFlight(t *testing.T) {
	db := open(t)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := db.Put(bg, &couchdoc.Doc{ID: "upload", Attachments: map[string]*couchdoc.Attachment{"a": {Body: pr}}})
		done <- err
	}()
	pw.Write(bytes.Repeat([]byte("c"), 3<<20)) // some chunks are staged now
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	pw.Write(bytes.Repeat([]byte("d"), 1<<20))
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, rc, err := db.OpenAttachment(bg, "upload", "", "a")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, rc)
	rc.Close()
	if n != 4<<20 {
		t.Fatalf("read back %d bytes", n)
	}
}

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
	big := randomBytes(2*chunk+chunk/2, 3) // three chunks
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
		got, err := readAtt(t, db, "s", "blob")
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
	checkInv(t, db)
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
