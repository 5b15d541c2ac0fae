package synctest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	gosync "sync"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
)

// readAtt reads an attachment of a store's winning revision whole.
func readAtt(t testing.TB, db *localdb.DB, id, name string) ([]byte, error) {
	t.Helper()
	_, rc, err := db.OpenAttachment(context.Background(), id, "", name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// wantBytes fails unless the attachment reads as want.
func wantBytes(t testing.TB, db *localdb.DB, id, name string, want []byte) {
	t.Helper()
	got, err := readAtt(t, db, id, name)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s/%s: %d bytes, %v; want %d bytes", id, name, len(got), err, len(want))
	}
}

// wantMissing fails unless the attachment's body is not downloaded.
func wantMissing(t testing.TB, db *localdb.DB, id, name string) {
	t.Helper()
	if _, err := readAtt(t, db, id, name); !errors.Is(err, localdb.ErrAttachmentNotDownloaded) {
		t.Fatalf("%s/%s: %v, want not downloaded", id, name, err)
	}
}

// sameStores fails unless a and b hold the same documents (winning
// revision, body, attachment metadata and bytes).
func sameStores(t testing.TB, a, b *localdb.DB) {
	t.Helper()
	ctx := context.Background()
	docs := func(db *localdb.DB) map[string]*couchdoc.Doc {
		out := map[string]*couchdoc.Doc{}
		if _, err := db.AllDocs(ctx, localdb.AllDocsOptions{IncludeDocs: true}, func(r *localdb.AllDocsRow) error {
			out[r.ID] = r.Doc
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	da, db := docs(a), docs(b)
	if len(da) != len(db) {
		t.Fatalf("%d documents vs %d", len(da), len(db))
	}
	for id, x := range da {
		y := db[id]
		if y == nil || x.Rev != y.Rev || !bytes.Equal(x.Body, y.Body) || len(x.Attachments) != len(y.Attachments) {
			t.Fatalf("%s: %+v vs %+v", id, x, y)
		}
		for name, p := range x.Attachments {
			q := y.Attachments[name]
			if q == nil || p.Digest != q.Digest || p.Length != q.Length || p.RevPos != q.RevPos || p.ContentType != q.ContentType {
				t.Fatalf("%s/%s: %+v vs %+v", id, name, p, q)
			}
			pb, err1 := readAtt(t, a, id, name)
			qb, err2 := readAtt(t, b, id, name)
			if err1 != nil || err2 != nil || !bytes.Equal(pb, qb) {
				t.Fatalf("%s/%s bytes: %v %v", id, name, err1, err2)
			}
		}
	}
}

// testLazyAttachments: a lazy pull brings metadata only, bodies are
// fetched on demand and evicted; a push of what lacks bodies fails those
// documents alone; once fetched, a fresh target gets everything, and an
// eager pull from it compares equal.
func testLazyAttachments(t *testing.T, newDB Factory, caps Caps) {
	ctx := Ctx(t)
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	rng := rand.New(rand.NewPCG(3, 4))
	big, huge := make([]byte, 300<<10), make([]byte, 200<<10)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	for i := range huge {
		huge[i] = byte(rng.Uint32())
	}
	note := []byte("a short note")
	att := func(ct string, b []byte) *couchdoc.Attachment {
		return &couchdoc.Attachment{ContentType: ct, Data: b, Length: int64(len(b))}
	}
	for _, d := range []*couchdoc.Doc{
		{ID: "photos", Body: json.RawMessage(`{"album":1}`), Attachments: map[string]*couchdoc.Attachment{
			"big.bin": att("application/octet-stream", big), "huge.bin": att("application/octet-stream", huge), "note.txt": att("text/plain", note)}},
		{ID: "dup", Body: json.RawMessage(`{"copy":true}`), Attachments: map[string]*couchdoc.Attachment{"copy.bin": att("application/octet-stream", big)}},
		{ID: "plain", Body: json.RawMessage(`{"v":1}`)},
	} {
		if _, err := a.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	replicate(t, sync.Options{Source: Local(a), Target: Remote(t, u, nil)})

	// Lazy pull: metadata, no bytes.
	cnt := &Counter{}
	remote := Remote(t, u, cnt)
	res := replicate(t, sync.Options{Source: remote, Target: Local(b), Attachments: sync.Lazy})
	if res.Stats.DocsWritten != 3 || res.Stats.DocWriteFailures != 0 {
		t.Fatalf("lazy pull stats %+v", res.Stats)
	}
	if cnt.Bytes() > 64<<10 {
		t.Fatalf("lazy pull moved %d bytes: %v", cnt.Bytes(), cnt.By())
	}
	t.Logf("lazy pull of 800 KB of attachments moved %d bytes", cnt.Bytes())
	for _, x := range [][2]string{{"photos", "big.bin"}, {"photos", "huge.bin"}, {"photos", "note.txt"}, {"dup", "copy.bin"}} {
		wantMissing(t, b, x[0], x[1])
	}
	st, err := b.Attachment(ctx, "photos", "huge.bin")
	if err != nil || st.Attachment.Length != int64(len(huge)) || st.Attachment.Digest != digestOf(huge) || st.Attachment.RevPos != 1 {
		t.Fatalf("lazy metadata %+v %v", st, err)
	}
	if err := b.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}

	// Fetch on demand, with progress; bytes shared by digest serve both.
	var last, total int64
	err = localpeer.FetchAttachmentWith(ctx, remote, b, "photos", "big.bin", localpeer.FetchOptions{OnProgress: func(d, n int64) { last, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	if last != int64(len(big)) || total != last {
		t.Fatalf("progress ended at %d of %d", last, total)
	}
	wantBytes(t, b, "photos", "big.bin", big)
	wantBytes(t, b, "dup", "copy.bin", big)
	if err := localpeer.FetchAttachment(ctx, remote, b, "photos", "huge.bin"); err != nil {
		t.Fatal(err)
	}
	wantBytes(t, b, "photos", "huge.bin", huge)

	// Evict: huge.bin goes; big.bin stays, as dup holds the same bytes.
	for _, name := range []string{"huge.bin", "big.bin"} {
		if err := b.EvictAttachment(ctx, "photos", name); err != nil {
			t.Fatal(err)
		}
	}
	wantMissing(t, b, "photos", "huge.bin")
	wantBytes(t, b, "photos", "big.bin", big)
	if err := b.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}

	// LazyOver: small bodies come, large ones stay behind.
	d := localdbtest.OpenNamed(t, "d", nil)
	replicate(t, sync.Options{Source: Remote(t, u, nil), Target: Local(d), Attachments: sync.LazyOver(1000)})
	wantBytes(t, d, "photos", "note.txt", note)
	wantMissing(t, d, "photos", "huge.bin")
	wantMissing(t, d, "dup", "copy.bin")

	// Push to a fresh target, the origin out of reach: photos lacks
	// bodies the target lacks and fails alone; the others arrive.
	u2 := newDB(t)
	unreachable := func(ctx context.Context, id, name string) error { return errors.New("origin unreachable") }
	res, err = sync.Replicate(ctx, sync.Options{Source: Local(b), Target: Remote(t, u2, nil), FetchMissing: unreachable})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocWriteFailures != 1 || len(res.DocFailures) != 1 || res.DocFailures[0].ID != "photos" ||
		!errors.Is(res.DocFailures[0].Err, localdb.ErrAttachmentNotDownloaded) || !strings.Contains(res.DocFailures[0].Err.Error(), "origin unreachable") {
		t.Fatalf("push of a doc lacking bodies: %+v %+v", res.Stats, res.DocFailures)
	}
	if _, st := RemoteGet(t, u2, "photos"); st != 404 {
		t.Fatalf("photos on the fresh target: status %d", st)
	}
	if rd, st := RemoteGet(t, u2, "dup"); st != 200 || rd.Atts["copy.bin"].Digest != digestOf(big) {
		t.Fatalf("dup on the fresh target: %d %+v", st, rd)
	}

	// An edit of photos pushed back to where it came from sends stubs
	// the target resolves (it has revpos 1), when it says so in
	// possible_ancestors.
	if caps.AttsSince {
		cur, err := b.Get(ctx, "photos", localdb.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur.Body = json.RawMessage(`{"album":2}`)
		rev2, err := b.Put(ctx, cur)
		if err != nil {
			t.Fatal(err)
		}
		res := replicate(t, sync.Options{Source: Local(b), Target: Remote(t, u, nil)})
		if res.Stats.DocWriteFailures != 0 {
			t.Fatalf("push of an edit with stubs the target has: %+v", res.DocFailures)
		}
		if rd, _ := RemoteGet(t, u, "photos"); rd.Rev != rev2 || rd.Atts["huge.bin"].Digest != digestOf(huge) {
			t.Fatalf("edit on the origin %+v", rd)
		}
	}

	// A push to another fresh target that fetches what is missing from
	// the origin first: nothing fails.
	u3 := newDB(t)
	res = replicate(t, sync.Options{Source: Local(b), Target: Remote(t, u3, nil), FetchMissing: localpeer.FetchFrom(remote, b)})
	if res.Stats.DocWriteFailures != 0 || res.Stats.DocsWritten != 3 {
		t.Fatalf("push fetching missing bodies: %+v %+v", res.Stats, res.DocFailures)
	}
	if rd, st := RemoteGet(t, u3, "photos"); st != 200 || rd.Atts["huge.bin"].Digest != digestOf(huge) || rd.Atts["note.txt"].Length != int64(len(note)) {
		t.Fatalf("photos on the target: %d %+v", st, rd)
	}
	wantBytes(t, b, "photos", "huge.bin", huge)
	wantBytes(t, b, "photos", "note.txt", note)

	// Those fetches listed photos in the local changes feed again: the
	// next push to the target that refused it sends it.
	res = replicate(t, sync.Options{Source: Local(b), Target: Remote(t, u2, nil)})
	if res.Stats.DocWriteFailures != 0 || res.Stats.DocsWritten != 1 {
		t.Fatalf("push after fetching: %+v", res.DocFailures)
	}
	c := localdbtest.OpenNamed(t, "c", nil)
	replicate(t, sync.Options{Source: Remote(t, u2, nil), Target: Local(c)})
	sameStores(t, b, c)
	if err := c.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}
}

// cutter drops the first cuts attachment answers after 64 KiB of body,
// and records the Range headers and statuses of attachment requests.
type cutter struct {
	mu       gosync.Mutex
	cuts     int
	ranges   []string
	statuses []int
}

func (c *cutter) RoundTrip(req *http.Request) (*http.Response, error) {
	isAtt := req.Method == "GET" && strings.Count(strings.Trim(req.URL.Path, "/"), "/") == 2
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !isAtt {
		return resp, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ranges = append(c.ranges, req.Header.Get("Range"))
	c.statuses = append(c.statuses, resp.StatusCode)
	if c.cuts > 0 {
		c.cuts--
		resp.Body = &cutAfter{rc: resp.Body, left: 64 << 10}
	}
	return resp, nil
}

type cutAfter struct {
	rc   io.ReadCloser
	left int
}

func (b *cutAfter) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= n
	return n, err
}

func (b *cutAfter) Close() error { return b.rc.Close() }

// testFetchResumes: a fetch cut twice finishes with the right bytes,
// resuming with Range where the remote answers 206.
func testFetchResumes(t *testing.T, newDB Factory) {
	ctx := Ctx(t)
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	data := make([]byte, 300<<10)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if _, err := a.Put(ctx, &couchdoc.Doc{ID: "v", Attachments: map[string]*couchdoc.Attachment{
		"video.bin": {ContentType: "application/octet-stream", Data: data}}}); err != nil {
		t.Fatal(err)
	}
	replicate(t, sync.Options{Source: Local(a), Target: Remote(t, u, nil)})
	replicate(t, sync.Options{Source: Remote(t, u, nil), Target: Local(b), Attachments: sync.Lazy})
	c := &cutter{cuts: 2}
	if err := localpeer.FetchAttachment(ctx, remoteVia(t, u, c), b, "v", "video.bin"); err != nil {
		t.Fatal(err)
	}
	wantBytes(t, b, "v", "video.bin", data)
	// A remote that answers ranges (206) resumes where the cut was; one
	// that answers 200 (pouchdb-server) sends it all again, what was
	// read being skipped, so its second cut leaves the offset where it was.
	third := "bytes=65536-"
	if len(c.statuses) > 1 && c.statuses[1] == http.StatusPartialContent {
		third = "bytes=131072-"
	}
	if len(c.ranges) != 3 || c.ranges[0] != "" || c.ranges[1] != "bytes=65536-" || c.ranges[2] != third {
		t.Fatalf("requests' ranges %q, statuses %v", c.ranges, c.statuses)
	}
	t.Logf("resumed fetch: ranges %q, statuses %v", c.ranges, c.statuses)
	if err := b.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}
}

func digestOf(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func testAttachments(t *testing.T, newDB Factory, caps Caps) {
	u := newDB(t)
	a, b := localdbtest.OpenNamed(t, "a", nil), localdbtest.OpenNamed(t, "b", nil)
	small := []byte("hello attachment")
	// large streams on a pull into the store; medium is read into memory
	// and written in a batch (localpeer's InlineAttachmentMax).
	large, medium := make([]byte, 3<<20), make([]byte, 200<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range large {
		large[i] = byte(rng.Uint32())
	}
	copy(medium, large[1000:])
	doc := &couchdoc.Doc{ID: "withatts", Body: json.RawMessage(`{"k":1}`), Attachments: map[string]*couchdoc.Attachment{
		"small.txt":  {Name: "small.txt", ContentType: "text/plain", Data: small, Length: int64(len(small))},
		"large.bin":  {Name: "large.bin", ContentType: "application/octet-stream", Body: bytes.NewReader(large), Length: int64(len(large))},
		"medium.bin": {Name: "medium.bin", ContentType: "application/octet-stream", Body: bytes.NewReader(medium), Length: int64(len(medium))},
	}}
	rev, err := a.Put(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}
	syncBoth(t, Local(a), Remote(t, u, nil))
	rd, _ := RemoteGet(t, u, "withatts")
	if rd.Rev != rev || rd.Atts["large.bin"].Digest != digestOf(large) || rd.Atts["small.txt"].Length != int64(len(small)) {
		t.Fatalf("remote doc %+v", rd)
	}
	syncBoth(t, Local(b), Remote(t, u, nil))
	for name, want := range map[string][]byte{"small.txt": small, "medium.bin": medium, "large.bin": large} {
		_, body, err := b.OpenAttachment(context.Background(), "withatts", "", name)
		if err != nil {
			t.Fatalf("%s on b: %v", name, err)
		}
		got, err := io.ReadAll(body)
		body.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s on b: %d bytes, err %v", name, len(got), err)
		}
	}
	// An edit that keeps the attachments travels with stubs (atts_since =
	// the revision the other side has): the bytes are not sent again.
	prev, err := b.Get(context.Background(), "withatts", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev.Body = json.RawMessage(`{"k":2}`)
	rev2, err := b.Put(context.Background(), prev)
	if err != nil {
		t.Fatal(err)
	}
	cnt, cnt2 := &Counter{}, &Counter{}
	syncBoth(t, Local(b), Remote(t, u, cnt))
	syncBoth(t, Local(a), Remote(t, u, cnt2))
	t.Logf("edit keeping a 3 MB attachment: push moved %d bytes, pull %d", cnt.Bytes(), cnt2.Bytes())
	got, err := a.Get(context.Background(), "withatts", localdb.GetOptions{})
	if err != nil || got.Rev != rev2 || got.Attachments["large.bin"] == nil || got.Attachments["large.bin"].Digest != digestOf(large) {
		t.Fatalf("edit with stubs on a: %v %+v", err, got)
	}
	if caps.AttsSince && cnt.Bytes()+cnt2.Bytes() > 1<<20 {
		t.Fatalf("an edit keeping a 3 MB attachment moved %d bytes", cnt.Bytes()+cnt2.Bytes())
	}
}
