package localpeer_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// fetchChildEnv makes the test binary a process that fetches photo.jpg of
// document p into the store at SETTEE_FETCH_PATH from the database at
// SETTEE_FETCH_URL, and is killed before it ends.
const fetchChildEnv = "SETTEE_FETCH_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(fetchChildEnv) == "1" {
		db, err := localdb.Open(os.Getenv("SETTEE_FETCH_PATH"), nil)
		if err == nil {
			var remote *couch.DB
			if remote, err = couch.New(os.Getenv("SETTEE_FETCH_URL"), nil); err == nil {
				err = localpeer.FetchAttachment(context.Background(), remote, db, "p", "photo.jpg")
			}
		}
		fmt.Fprintln(os.Stderr, "fetch child ended:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestFetchResumesAfterKill: the process fetching a body is killed
// (SIGKILL) while the transfer stalls; a new process opening the store
// asks only for the bytes after those it had stored, and stores the
// right body.
func TestFetchResumesAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	r := rand.New(rand.NewPCG(9, 9))
	photo := make([]byte, 2_000_000)
	for i := range photo {
		photo[i] = byte(r.Uint32())
	}
	const sent = 1_300_000 // then the transfer stalls
	var mu gosync.Mutex
	var ranges []string
	stall := make(chan struct{})
	defer close(stall)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		ranges = append(ranges, req.Header.Get("Range"))
		first := len(ranges) == 1
		mu.Unlock()
		off := 0
		if rg := req.Header.Get("Range"); rg != "" {
			fmt.Sscanf(rg, "bytes=%d-", &off)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, len(photo)-1, len(photo)))
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(photo)-off))
		if off > 0 {
			w.WriteHeader(http.StatusPartialContent)
		}
		if first {
			w.Write(photo[:sent])
			w.(http.Flusher).Flush()
			select {
			case <-stall:
			case <-req.Context().Done():
			}
			return
		}
		w.Write(photo[off:])
	}))
	defer hs.Close()

	path := filepath.Join(t.TempDir(), "phone.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	lazyPhoto(t, db, "p", photo)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), fetchChildEnv+"=1", "SETTEE_FETCH_PATH="+path, "SETTEE_FETCH_URL="+hs.URL+"/db")
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// The first 1 MiB batch (4 whole chunks) is stored while the rest of
	// what was sent waits in the child's buffer.
	const kept = 4 * 256 << 10
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for {
		var n int64
		err := raw.QueryRowContext(ctx, "SELECT COALESCE(MAX(length), 0) FROM att_partial").Scan(&n)
		if err == nil && n >= kept {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the child never stored %d bytes (last %d, %v); its stderr: %s", kept, n, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	raw.Close()
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.PartialDownload(ctx, "p", "photo.jpg"); err != nil || n != kept {
		t.Fatalf("after the kill: %d bytes kept (%v), want %d", n, err, kept)
	}
	remote, err := couch.New(hs.URL+"/db", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := localpeer.FetchAttachment(ctx, remote, db, "p", "photo.jpg"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]string(nil), ranges...)
	mu.Unlock()
	if want := fmt.Sprintf("bytes=%d-", kept); len(got) != 2 || got[0] != "" || got[1] != want {
		t.Fatalf("ranges asked %q, want [\"\" %q]", got, want)
	}
	_, rc, err := db.OpenAttachment(ctx, "p", "", "photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(body, photo) {
		t.Fatalf("stored %d bytes (%v), want the photo's %d", len(body), err, len(photo))
	}
	if err := db.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}
}
