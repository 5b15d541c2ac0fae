package sync_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"strings"
	gosync "sync"
	"testing"

	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/server"
	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
	"github.com/settee/settee/sync/synctest"
)

// randReader is n deterministic pseudo-random bytes.
type randReader struct {
	rng *rand.Rand
	n   int64
}

func (r *randReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n)]
	for i := range p {
		p[i] = byte(r.rng.Uint32())
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// cutEvery cuts the first cuts attachment answers after every bytes.
type cutEvery struct {
	mu     gosync.Mutex
	cuts   int
	every  int
	ranges []string
}

func (c *cutEvery) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != "GET" || strings.Count(strings.Trim(req.URL.Path, "/"), "/") != 2 {
		return resp, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ranges = append(c.ranges, req.Header.Get("Range"))
	if c.cuts > 0 {
		c.cuts--
		resp.Body = &cutBody{r: resp.Body, left: c.every}
	}
	return resp, nil
}

// A 48 MiB attachment fetched on demand through a connection cut five
// times arrives whole and right, resumed with Range each time, streamed
// (the heap never holds half of it: about 16 MiB of it is the test's
// server and store, whatever the size; 1 GiB peaks at 12-20 MiB).
func TestFetchLargeAttachmentCutFiveTimes(t *testing.T) {
	// 48 MiB in the suite; SETTEE_SOAK=1 moves the 1 GiB.
	size := int64(48 << 20)
	if os.Getenv("SETTEE_SOAK") != "" {
		size = 1 << 30
	}
	if testing.Short() {
		t.Skip("moves 48 MiB")
	}
	srv := servertest.Start(t, &server.Config{MaxBodySize: size + 1<<20})
	u := srv.CreateDB(t, "big")
	h := md5.New()
	req, _ := http.NewRequest("PUT", u+"/v/video.bin", io.TeeReader(&randReader{rng: rand.New(rand.NewPCG(7, 8)), n: size}, h))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("upload: %v %v", resp, err)
	}
	resp.Body.Close()
	want := h.Sum(nil)

	db := localdbtest.OpenNamed(t, "phone", nil)
	if _, err := sync.Replicate(context.Background(), sync.Options{Source: synctest.Remote(t, u, nil), Target: synctest.Local(db), Attachments: sync.Lazy}); err != nil {
		t.Fatal(err)
	}
	every := size / 8
	c := &cutEvery{cuts: 5, every: int(every)}
	remote, err := couch.New(u, &couch.Options{Transport: c})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	stop := peakHeap()
	err = localpeer.FetchAttachment(context.Background(), remote, db, "v", "video.bin")
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ranges) != 6 || c.ranges[5] != fmt.Sprintf("bytes=%d-", 5*every) {
		t.Fatalf("requests' ranges %q", c.ranges)
	}
	_, rc, err := db.OpenAttachment(context.Background(), "v", "", "video.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h.Reset()
	if n, err := io.Copy(h, rc); err != nil || n != size || string(h.Sum(nil)) != string(want) {
		t.Fatalf("stored %d bytes, %v, digest match %v", n, err, string(h.Sum(nil)) == string(want))
	}
	t.Logf("%d MiB fetched through 5 cuts: peak live heap %.1f MiB", size>>20, float64(peak)/(1<<20))
	if peak > uint64(size/2) {
		t.Fatalf("peak live heap %d bytes: the body was held in memory", peak)
	}
	if err := db.CheckInvariants(context.Background()); err != nil {
		t.Fatal(err)
	}
}
