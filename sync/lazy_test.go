package sync_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/sync"
)

// cutGetter serves data, cutting each answer after cut bytes; ranged
// says whether it honours offsets (206) or answers from the start (200).
type cutGetter struct {
	data   []byte
	cut    int
	ranged bool
	calls  []int64 // offsets asked
}

var _ sync.AttachmentGetter = (*cutGetter)(nil)

type cutBody struct {
	r    io.Reader
	left int
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.ErrUnexpectedEOF // the connection dropped
	}
	if len(p) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= n
	if err == io.EOF {
		return n, io.EOF
	}
	return n, err
}

func (b *cutBody) Close() error { return nil }

func (g *cutGetter) GetAttachment(ctx context.Context, id, rev, name string, offset int64) (io.ReadCloser, bool, error) {
	g.calls = append(g.calls, offset)
	from := int64(0)
	if g.ranged {
		from = offset
	}
	return &cutBody{r: bytes.NewReader(g.data[from:]), left: g.cut}, g.ranged, nil
}

func md5Of(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func TestAttachmentReaderResumes(t *testing.T) {
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	att := &couchdoc.Attachment{Name: "a", Digest: md5Of(data), Length: int64(len(data))}
	g := &cutGetter{data: data, cut: 30_000, ranged: true}
	rc := sync.AttachmentReader(context.Background(), g, "d", "1-a", att, 5)
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%d bytes, %v (calls %v)", len(got), err, g.calls)
	}
	if len(g.calls) != 4 || g.calls[1] != 30_000 || g.calls[3] != 90_000 {
		t.Fatalf("offsets asked %v", g.calls)
	}
	// A peer that cuts every answer before any progress gives up after
	// the retries.
	g = &cutGetter{data: data, cut: 0, ranged: true}
	if _, err := io.ReadAll(sync.AttachmentReader(context.Background(), g, "d", "1-a", att, 3)); !errors.Is(err, io.ErrUnexpectedEOF) || len(g.calls) != 4 {
		t.Fatalf("no progress: %v after %d calls", err, len(g.calls))
	}
}

func TestAttachmentReaderRestartsWithoutRanges(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10_000)
	att := &couchdoc.Attachment{Name: "a", Digest: md5Of(data), Length: int64(len(data))}
	g := &flakyGetter{data: data, cuts: []int{40_000}}
	rc := sync.AttachmentReader(context.Background(), g, "d", "1-a", att, 5)
	got, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(got, data) || len(g.offsets) != 2 || g.offsets[1] != 40_000 {
		t.Fatalf("%d bytes, %v, offsets %v", len(got), err, g.offsets)
	}
}

// flakyGetter answers from the start (200), cutting the i-th answer after
// cuts[i] bytes; later answers are whole.
type flakyGetter struct {
	data    []byte
	cuts    []int
	offsets []int64
}

func (g *flakyGetter) GetAttachment(ctx context.Context, id, rev, name string, offset int64) (io.ReadCloser, bool, error) {
	i := len(g.offsets)
	g.offsets = append(g.offsets, offset)
	left := len(g.data) + 1
	if i < len(g.cuts) {
		left = g.cuts[i]
	}
	return &cutBody{r: bytes.NewReader(g.data), left: left}, false, nil
}

func TestAttachmentReaderRefusesWrongBytes(t *testing.T) {
	data := []byte("the right bytes")
	for _, c := range []struct {
		name string
		att  *couchdoc.Attachment
		want error
	}{
		{"digest", &couchdoc.Attachment{Name: "a", Digest: md5Of([]byte("other bytes 123")), Length: int64(len(data))}, couchdoc.ErrDigestMismatch},
		{"longer", &couchdoc.Attachment{Name: "a", Digest: md5Of(data), Length: 5}, couchdoc.ErrDigestMismatch},
		{"shorter", &couchdoc.Attachment{Name: "a", Digest: md5Of(data), Length: 50}, io.ErrUnexpectedEOF},
	} {
		g := &flakyGetter{data: data}
		_, err := io.ReadAll(sync.AttachmentReader(context.Background(), g, "d", "1-a", c.att, 2))
		if !errors.Is(err, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// A gzip-stored attachment's digest is over bytes not seen: not checked.
	att := &couchdoc.Attachment{Name: "a", Digest: "md5-AAAAAAAAAAAAAAAAAAAAAA==", Length: int64(len(data)), Encoding: "gzip"}
	if got, err := io.ReadAll(sync.AttachmentReader(context.Background(), &flakyGetter{data: data}, "d", "1-a", att, 2)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("gzip: %q %v", got, err)
	}
}

func TestParseAttachments(t *testing.T) {
	for in, want := range map[string]sync.Attachments{"": sync.Eager, "eager": sync.Eager, "lazy": sync.Lazy, "lazy-over=1000": sync.LazyOver(1000)} {
		got, err := sync.ParseAttachments(in)
		if err != nil || got != want {
			t.Fatalf("%q: %v %v", in, got, err)
		}
		if in != "" && got.String() != in {
			t.Fatalf("%q prints as %q", in, got)
		}
	}
	for _, bad := range []string{"lazy-over=", "lazy-over=-1", "Lazy", "some"} {
		if _, err := sync.ParseAttachments(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}
