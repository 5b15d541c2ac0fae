package localdb_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// chunk is localdb's attachment chunk size: a kept download holds whole
// chunks.
const chunk = 256 << 10

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// cutReader gives data and then fails, as a connection cut mid-body.
type cutReader struct {
	r io.Reader
}

var errCut = errors.New("connection cut")

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		return n, errCut
	}
	return n, err
}

// opener serves body from the asked offset, cut after cutAt bytes of the
// whole (0: not cut), and records the offsets asked for.
type opener struct {
	body    []byte
	cutAt   int
	offsets []int64
}

func (o *opener) open(_ context.Context, offset int64) (io.ReadCloser, error) {
	o.offsets = append(o.offsets, offset)
	if o.cutAt > 0 {
		return io.NopCloser(&cutReader{bytes.NewReader(o.body[offset:o.cutAt])}), nil
	}
	return io.NopCloser(bytes.NewReader(o.body[offset:])), nil
}

func reopen(t *testing.T, db *localdb.DB, path string) *localdb.DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func partials(t *testing.T, path string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow("SELECT COUNT(*) FROM att_partial").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDownloadKeptAcrossReopen: a download cut mid-body keeps its whole
// chunks; after the store is reopened the next download asks for the
// rest only, and the stored bytes are the attachment's.
func TestDownloadKeptAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	photo := randomBytes(2*chunk+100_000, 1)
	if res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{lazyDoc("p", map[string][]byte{"photo.jpg": photo})}); err != nil || res[0].Err() != nil {
		t.Fatalf("lazy write: %+v %v", res, err)
	}
	o := &opener{body: photo, cutAt: 2*chunk + 50_000}
	err = db.DownloadAttachment(bg, "p", "photo.jpg", o.open)
	if !errors.Is(err, errCut) {
		t.Fatalf("cut download: %v, want the reader's error", err)
	}
	if n, err := db.PartialDownload(bg, "p", "photo.jpg"); err != nil || n != 2*chunk {
		t.Fatalf("kept %d bytes (%v), want the %d of whole chunks", n, err, 2*chunk)
	}
	if _, err := readAtt(t, db, "p", "photo.jpg"); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		t.Fatalf("partial bytes readable: %v", err)
	}
	checkInv(t, db)
	db = reopen(t, db, path)
	if n, err := db.PartialDownload(bg, "p", "photo.jpg"); err != nil || n != 2*chunk {
		t.Fatalf("after reopening: kept %d bytes (%v), want %d", n, err, 2*chunk)
	}
	if st, err := db.Stats(bg); err != nil || st.PartialDownloads != 1 || st.PartialBytes != 2*chunk || st.NotDownloaded != 1 {
		t.Fatalf("stats with a kept download: %+v %v", st, err)
	}
	// Compact keeps a download of content still lacking.
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	o.cutAt = 0
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); err != nil {
		t.Fatal(err)
	}
	if len(o.offsets) != 2 || o.offsets[0] != 0 || o.offsets[1] != 2*chunk {
		t.Fatalf("offsets asked %v, want [0 %d]", o.offsets, 2*chunk)
	}
	got, err := readAtt(t, db, "p", "photo.jpg")
	if err != nil || !bytes.Equal(got, photo) {
		t.Fatalf("stored %d bytes (%v), want the photo's %d", len(got), err, len(photo))
	}
	if n := partials(t, path); n != 0 {
		t.Errorf("%d kept downloads left after the download finished", n)
	}
	if st, err := db.Stats(bg); err != nil || st.PartialDownloads != 0 || st.PartialBytes != 0 || st.NotDownloaded != 0 {
		t.Fatalf("stats after the download: %+v %v", st, err)
	}
	checkInv(t, db)
	// Done: another download is a no-op.
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); err != nil || len(o.offsets) != 2 {
		t.Fatalf("download of present bytes: %v, asked %v", err, o.offsets)
	}
}

// TestDownloadDigestMismatchKeepsNothing: bytes whose digest is not the
// attachment's (the resumed part differs) are discarded, kept ones
// included, and the next download starts from 0.
func TestDownloadDigestMismatchKeepsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	photo := randomBytes(chunk+70_000, 2)
	if res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{lazyDoc("p", map[string][]byte{"photo.jpg": photo})}); err != nil || res[0].Err() != nil {
		t.Fatalf("lazy write: %+v %v", res, err)
	}
	o := &opener{body: photo, cutAt: chunk + 1000}
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); !errors.Is(err, errCut) {
		t.Fatal(err)
	}
	// The rest comes from a source whose bytes changed.
	bad := bytes.Clone(photo)
	bad[len(bad)-1] ^= 1
	o.body, o.cutAt = bad, 0
	err = db.DownloadAttachment(bg, "p", "photo.jpg", o.open)
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("wrong bytes: %v, want ErrDigestMismatch", err)
	}
	if _, err := readAtt(t, db, "p", "photo.jpg"); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		t.Fatalf("wrong bytes stored: %v", err)
	}
	if n, err := db.PartialDownload(bg, "p", "photo.jpg"); err != nil || n != 0 || partials(t, path) != 0 {
		t.Fatalf("kept %d bytes (%v) after a digest mismatch", n, err)
	}
	checkInv(t, db)
	// Too long is refused as well, and nothing is kept.
	o.body = append(bytes.Clone(photo), 'x')
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("too many bytes: %v", err)
	}
	o.body = photo
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, chunk, 0, 0}; len(o.offsets) != 4 || o.offsets[2] != 0 || o.offsets[3] != 0 {
		t.Fatalf("offsets asked %v, want %v", o.offsets, want)
	}
	if got, err := readAtt(t, db, "p", "photo.jpg"); err != nil || !bytes.Equal(got, photo) {
		t.Fatalf("stored %d bytes (%v)", len(got), err)
	}
	checkInv(t, db)
}

// TestDownloadStaleDropped: when the document moves on to other content,
// the download kept for the old content is dropped (by Compact, once
// nothing refers to that content).
func TestDownloadStaleDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	old := randomBytes(chunk+10, 3)
	if res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{lazyDoc("p", map[string][]byte{"photo.jpg": old})}); err != nil || res[0].Err() != nil {
		t.Fatalf("lazy write: %+v %v", res, err)
	}
	o := &opener{body: old, cutAt: chunk + 5}
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); !errors.Is(err, errCut) {
		t.Fatal(err)
	}
	// Revision 2 replaces the photo (the remote's attachment changed).
	nu := randomBytes(1000, 4)
	d := &couchdoc.Doc{ID: "p", Rev: "2-b", Body: []byte(`{"v":2}`), Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{"b", "a"}},
		Attachments: map[string]*couchdoc.Attachment{"photo.jpg": {ContentType: "image/jpeg", Digest: digest(nu), Length: int64(len(nu)), RevPos: 2, Stub: true}}}
	if res, err := db.BulkDocsLazy(bg, []*couchdoc.Doc{d}); err != nil || res[0].Err() != nil {
		t.Fatalf("lazy write of 2-b: %+v %v", res, err)
	}
	if n, err := db.PartialDownload(bg, "p", "photo.jpg"); err != nil || n != 0 {
		t.Fatalf("new content: %d bytes kept (%v)", n, err)
	}
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	if n := partials(t, path); n != 0 {
		t.Fatalf("%d kept downloads of content nothing refers to after Compact", n)
	}
	checkInv(t, db)
	o = &opener{body: nu}
	if err := db.DownloadAttachment(bg, "p", "photo.jpg", o.open); err != nil || len(o.offsets) != 1 || o.offsets[0] != 0 {
		t.Fatalf("download of the new content: %v, offsets %v", err, o.offsets)
	}
}

// TestDownloadsOfSameContentWait: two documents with the same photo
// fetched at once: one download runs, the other waits for it and finds
// the bytes there (its source is never asked).
func TestDownloadsOfSameContentWait(t *testing.T) {
	db := open(t)
	photo := randomBytes(chunk+1, 5)
	docs := []*couchdoc.Doc{lazyDoc("a", map[string][]byte{"photo.jpg": photo}), lazyDoc("b", map[string][]byte{"photo.jpg": photo})}
	if res, err := db.BulkDocsLazy(bg, docs); err != nil || res[0].Err() != nil || res[1].Err() != nil {
		t.Fatalf("lazy write: %+v %v", res, err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	var calls atomic.Int32
	slow := func(_ context.Context, offset int64) (io.ReadCloser, error) {
		if calls.Add(1) == 1 {
			close(started)
			<-release
		}
		return io.NopCloser(bytes.NewReader(photo[offset:])), nil
	}
	errs := make(chan error, 2)
	go func() { errs <- db.DownloadAttachment(bg, "a", "photo.jpg", slow) }()
	<-started
	go func() { errs <- db.DownloadAttachment(bg, "b", "photo.jpg", slow) }()
	time.Sleep(50 * time.Millisecond) // let the second reach the lock
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("source asked %d times, want once", n)
	}
	for _, id := range []string{"a", "b"} {
		if got, err := readAtt(t, db, id, "photo.jpg"); err != nil || !bytes.Equal(got, photo) {
			t.Errorf("%s: %d bytes, %v", id, len(got), err)
		}
	}
	checkInv(t, db)
}
