package synctest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

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
