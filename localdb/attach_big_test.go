package localdb_test

import (
	"crypto/md5"
	"io"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// genReader produces n bytes without holding them, and
// records the highest live heap it sees while being read.
type genReader struct {
	n, off  int64
	maxHeap uint64
	sample  []metrics.Sample
}

func newGen(n int64) *genReader {
	return &genReader{n: n, sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

// heap records the live heap: after a collection, so garbage (which the
// collector may be slow to reclaim on a busy machine) does not count, only
// what is retained.
func (g *genReader) heap() {
	runtime.GC()
	metrics.Read(g.sample)
	g.maxHeap = max(g.maxHeap, g.sample[0].Value.Uint64())
}

// pattern is what genReader repeats: random, so it does not compress.
var pattern = func() []byte {
	b := make([]byte, 1<<20)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}()

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.n-g.off)]
	k := copy(p, pattern[g.off%int64(len(pattern)):])
	g.off += int64(k)
	if g.off%(4<<20) < int64(k) {
		g.heap()
	}
	return k, nil
}

// TestLargeAttachmentStreams writes and reads a 16 MB attachment and checks
// that the live heap never grows by anything near its size.
func TestLargeAttachmentStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 16 MB")
	}
	const size = 16 << 20
	db := open(t)
	gen := newGen(size)
	gen.heap()
	base := gen.maxHeap
	h := md5.New()
	if _, err := io.Copy(h, newGen(size)); err != nil {
		t.Fatal(err)
	}
	want := "md5-" + b64(h.Sum(nil))
	rev, err := db.Put(bg, &couchdoc.Doc{ID: "big", Attachments: map[string]*couchdoc.Attachment{
		"blob": {ContentType: "application/octet-stream", Body: gen, Digest: want, Length: size},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if grew := gen.maxHeap - base; grew > size/4 {
		t.Fatalf("heap grew by %d bytes while writing a %d byte attachment", grew, size)
	}
	doc, err := db.Get(bg, "big", localdb.GetOptions{Rev: rev, Attachments: true})
	if err != nil {
		t.Fatal(err)
	}
	a := doc.Attachments["blob"]
	if a.Digest != want || a.Length != size || a.Body == nil {
		t.Fatalf("attachment %+v", a)
	}
	h.Reset()
	probe := newGen(0)
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := a.Body.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if n%(4<<20) < int64(k) {
			probe.heap()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	a.Body.(io.Closer).Close()
	if got := "md5-" + b64(h.Sum(nil)); got != want || n != size {
		t.Fatalf("read back %d bytes, digest %s", n, got)
	}
	if grew := probe.maxHeap - base; probe.maxHeap > base && grew > size/4 {
		t.Fatalf("heap grew by %d bytes while reading", grew)
	}
}
