package localpeer_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	gosync "sync"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// attServer serves attachment photo.jpg of documents as CouchDB does
// (rev required, Range honoured with 206), optionally cutting the
// connection after some bytes of the whole, and records the Range
// headers asked for.
type attServer struct {
	mu     gosync.Mutex
	bodies map[string][]byte // by document id
	cutAt  int               // > 0: drop the connection at this byte
	ranges []string
}

func (s *attServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/db/"), "/")
	s.mu.Lock()
	body, ok := s.bodies[parts[0]]
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	cut := s.cutAt
	s.mu.Unlock()
	if len(parts) != 2 || parts[1] != "photo.jpg" || !ok || r.URL.Query().Get("rev") == "" {
		http.NotFound(w, r)
		return
	}
	off := 0
	if rg := r.Header.Get("Range"); rg != "" {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-"))
		if err != nil || n >= len(body) {
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		off = n
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(body)-1, len(body)))
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)-off))
	if off > 0 {
		w.WriteHeader(http.StatusPartialContent)
	}
	if cut > off {
		w.Write(body[off:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-body
	}
	w.Write(body[off:])
}

func lazyPhoto(t *testing.T, db *localdb.DB, id string, photo []byte) {
	t.Helper()
	sum := md5.Sum(photo)
	d := &couchdoc.Doc{ID: id, Rev: "1-a", Body: []byte(`{}`), Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"a"}},
		Attachments: map[string]*couchdoc.Attachment{"photo.jpg": {ContentType: "image/jpeg", Digest: "md5-" + base64.StdEncoding.EncodeToString(sum[:]),
			Length: int64(len(photo)), RevPos: 1, Stub: true}}}
	if res, err := db.BulkDocsLazy(context.Background(), []*couchdoc.Doc{d}); err != nil || res[0].Err() != nil {
		t.Fatalf("lazy write: %+v %v", res, err)
	}
}

// TestFetchResumesAfterReopen: a fetch cut mid-body (retries spent)
// keeps the bytes it stored; the store is closed and reopened, and the
// next fetch asks the remote for a Range from the kept offset and stores
// the right bytes. A digest mismatch stores nothing and keeps nothing.
func TestFetchResumesAfterReopen(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	photo := make([]byte, 700_000)
	for i := range photo {
		photo[i] = byte(r.Uint32())
	}
	srv := &attServer{bodies: map[string][]byte{"p": photo}, cutAt: 600_000}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	remote, err := couch.New(hs.URL+"/db", nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "l.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	lazyPhoto(t, db, "p", photo)
	err = localpeer.FetchAttachmentWith(ctx, remote, db, "p", "photo.jpg", localpeer.FetchOptions{Retries: -1})
	if err == nil {
		t.Fatal("a fetch cut with no retry succeeded")
	}
	const kept = 2 * 256 << 10 // the whole chunks of the 600,000 bytes read
	if n, err := db.PartialDownload(ctx, "p", "photo.jpg"); err != nil || n != kept {
		t.Fatalf("kept %d bytes (%v), want %d", n, err, kept)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv.mu.Lock()
	srv.cutAt = 0
	srv.mu.Unlock()
	var progress []int64
	err = localpeer.FetchAttachmentWith(ctx, remote, db, "p", "photo.jpg", localpeer.FetchOptions{OnProgress: func(done, total int64) {
		if total != int64(len(photo)) {
			t.Errorf("progress total %d", total)
		}
		progress = append(progress, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", fmt.Sprintf("bytes=%d-", kept)}; len(srv.ranges) != 2 || srv.ranges[0] != want[0] || srv.ranges[1] != want[1] {
		t.Fatalf("ranges asked %q, want %q", srv.ranges, want)
	}
	if len(progress) == 0 || progress[0] <= kept || progress[len(progress)-1] != int64(len(photo)) {
		t.Errorf("progress %v: want it to start after the kept %d and end at %d", progress, kept, len(photo))
	}
	_, rc, err := db.OpenAttachment(ctx, "p", "", "photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, photo) {
		t.Fatalf("stored %d bytes (%v), want the photo's %d", len(got), err, len(photo))
	}
	if err := db.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}

	// Digest mismatch: the remote's bytes are not the ones the stub
	// names, from a kept offset on.
	other := bytes.Clone(photo[:400_000])
	lazyPhoto(t, db, "q", other)
	bad := bytes.Clone(other)
	bad[len(bad)-1] ^= 0xff
	srv.mu.Lock()
	srv.bodies["q"], srv.cutAt, srv.ranges = other, 300_000, nil
	srv.mu.Unlock()
	if err := localpeer.FetchAttachmentWith(ctx, remote, db, "q", "photo.jpg", localpeer.FetchOptions{Retries: -1}); err == nil {
		t.Fatal("cut fetch of q succeeded")
	}
	srv.mu.Lock()
	srv.bodies["q"], srv.cutAt = bad, 0
	srv.mu.Unlock()
	err = localpeer.FetchAttachment(ctx, remote, db, "q", "photo.jpg")
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("wrong bytes: %v, want ErrDigestMismatch", err)
	}
	if want := []string{"", "bytes=262144-"}; len(srv.ranges) != 2 || srv.ranges[1] != want[1] {
		t.Fatalf("ranges asked %q, want %q", srv.ranges, want)
	}
	if st, err := db.Attachment(ctx, "q", "photo.jpg"); err != nil || st.Downloaded {
		t.Fatalf("wrong bytes stored: %+v %v", st, err)
	}
	if n, err := db.PartialDownload(ctx, "q", "photo.jpg"); err != nil || n != 0 {
		t.Fatalf("%d bytes kept after a digest mismatch (%v)", n, err)
	}
	if err := db.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}
}
