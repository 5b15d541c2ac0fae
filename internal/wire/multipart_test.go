package wire

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

func md5Digest(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

type gotDoc struct {
	doc  *couchdoc.Doc
	err  error
	atts map[string][]byte
}

// collect reads every attachment body in the order given by readOrder (or
// map order) inside the callback.
func collect(t *testing.T, readOrder []string) (DocFunc, *[]gotDoc) {
	var out []gotDoc
	return func(doc *couchdoc.Doc, revErr error) error {
		g := gotDoc{doc: doc, err: revErr, atts: map[string][]byte{}}
		if doc != nil {
			names := readOrder
			if names == nil {
				for n := range doc.Attachments {
					names = append(names, n)
				}
			}
			for _, n := range names {
				a := doc.Attachments[n]
				if a == nil || a.Body == nil {
					continue
				}
				b, err := io.ReadAll(a.Body)
				if err != nil {
					return err
				}
				g.atts[n] = b
			}
		}
		out = append(out, g)
		return nil
	}, &out
}

func TestReadOpenRevsMixedFixture(t *testing.T) {
	resp := fixture(t, "open_revs_mixed.http")
	fn, got := collect(t, nil)
	if err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), fn); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 3 {
		t.Fatalf("got %d entries, want 3", len(*got))
	}
	d0, d1, d2 := (*got)[0], (*got)[1], (*got)[2]
	if d0.doc == nil || d0.doc.Rev != "1-917fa2381192822767f010b95b45325b" || len(d0.doc.Attachments) != 0 {
		t.Errorf("first part: %+v", d0)
	}
	if d1.doc == nil || d1.doc.Rev[:2] != "7-" || d1.doc.Revisions.Start != 7 {
		t.Fatalf("second part: %+v", d1)
	}
	if body := d1.atts["recipe.txt"]; len(body) != 87 || !strings.HasPrefix(string(body), "1. Cook spaghetti") {
		t.Errorf("recipe.txt = %q", body)
	}
	var re *RevError
	if d2.doc != nil || !errors.Is(d2.err, couchdoc.ErrNotFound) || !errors.As(d2.err, &re) || re.Rev != "3-6bcedf1f6b2e1dc3b4d6a3ec1d4a4b7e" {
		t.Errorf("third part: %+v", d2)
	}
}

func TestReadTwoAttachmentsAnyOrder(t *testing.T) {
	for _, order := range [][]string{{"zeta.bin", "alpha.txt"}, {"alpha.txt", "zeta.bin"}, {"alpha.txt"}} {
		resp := fixture(t, "open_revs_two_atts.http")
		fn, got := collect(t, order)
		if err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), fn); err != nil {
			t.Fatalf("order %v: %v", order, err)
		}
		d := (*got)[0]
		if want := strings.Repeat("hello, world\n", 500); string(d.atts["alpha.txt"]) != want {
			t.Errorf("order %v: alpha.txt (gzip on the wire) = %d bytes", order, len(d.atts["alpha.txt"]))
		}
		if len(order) == 2 && len(d.atts["zeta.bin"]) != 10240 {
			t.Errorf("order %v: zeta.bin = %d bytes", order, len(d.atts["zeta.bin"]))
		}
		if a := d.doc.Attachments["old.txt"]; a == nil || !a.Stub || a.Body != nil {
			t.Errorf("stub old.txt = %+v", a)
		}
	}
}

func TestReadBadDigest(t *testing.T) {
	resp := fixture(t, "open_revs_bad_digest.http")
	fn, _ := collect(t, []string{"zeta.bin", "alpha.txt"})
	err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), fn)
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("err = %v, want ErrDigestMismatch", err)
	}
	// and when the other attachment is read first
	resp = fixture(t, "open_revs_bad_digest.http")
	fn, _ = collect(t, []string{"alpha.txt", "zeta.bin"})
	err = ReadDocs(resp.Body, resp.Header.Get("Content-Type"), fn)
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("spooled: err = %v, want ErrDigestMismatch", err)
	}
}

func TestReadBulkGetMixedFixture(t *testing.T) {
	resp := fixture(t, "bulk_get_mixed.http")
	fn, got := collect(t, nil)
	if err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), fn); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 4 {
		t.Fatalf("got %d entries, want 4", len(*got))
	}
	g := *got
	if g[0].doc.ID != "x" || string(g[0].atts["x.txt"]) != strings.Repeat("attachment bytes of doc x\n", 3) {
		t.Errorf("x: %+v", g[0])
	}
	if g[1].doc.ID != "y" {
		t.Errorf("y: %+v", g[1])
	}
	var re *RevError
	if !errors.As(g[2].err, &re) || !errors.Is(g[2].err, couchdoc.ErrNotFound) || re.Rev == "" {
		t.Errorf("missing: %+v", g[2])
	}
	if g[3].doc.ID != "z" || !g[3].doc.Attachments["s.txt"].Stub {
		t.Errorf("z: %+v", g[3])
	}
}

func TestRelatedRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 200000) // 3.2 MB: spooled to a file when read out of order
	small := []byte("small")
	doc := &couchdoc.Doc{ID: "d/1 ü", Rev: "2-" + strings.Repeat("a", 32), Body: []byte(`{"x":1}`),
		Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{strings.Repeat("a", 32), strings.Repeat("b", 32)}},
		Attachments: map[string]*couchdoc.Attachment{
			`big "file".bin`: {ContentType: "application/octet-stream", Body: bytes.NewReader(big), Length: int64(len(big)), Digest: md5Digest(big), RevPos: 2},
			"café.txt":       {ContentType: "text/plain", Data: small, Digest: md5Digest(small), RevPos: 1},
			"stub.txt":       {ContentType: "text/plain", Stub: true, Length: 3, Digest: md5Digest([]byte("abc")), RevPos: 1},
		}}
	rel, err := NewRelated(doc)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := rel.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != rel.Len() || int64(buf.Len()) != n {
		t.Fatalf("wrote %d bytes, Len() = %d, buffer %d", n, rel.Len(), buf.Len())
	}
	for _, order := range [][]string{{"café.txt", `big "file".bin`}, {`big "file".bin`, "café.txt"}} {
		fn, got := collect(t, order)
		if err := ReadMultipart(bytes.NewReader(buf.Bytes()), rel.ContentType(), fn); err != nil {
			t.Fatal(err)
		}
		d := (*got)[0]
		if d.doc.ID != doc.ID || !bytes.Equal(d.atts[`big "file".bin`], big) || !bytes.Equal(d.atts["café.txt"], small) {
			t.Fatalf("order %v: round trip differs: id %q, %d / %d bytes", order, d.doc.ID, len(d.atts[`big "file".bin`]), len(d.atts["café.txt"]))
		}
		if a := d.doc.Attachments["stub.txt"]; !a.Stub {
			t.Errorf("stub lost: %+v", a)
		}
	}
}

func TestRelatedWriteBodyTooShort(t *testing.T) {
	doc := &couchdoc.Doc{ID: "d", Rev: "1-" + strings.Repeat("a", 32), Attachments: map[string]*couchdoc.Attachment{
		"a": {Body: strings.NewReader("abc"), Length: 5}}}
	rel, err := NewRelated(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rel.WriteTo(io.Discard); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("err = %v, want ErrDigestMismatch", err)
	}
}

func TestMixedRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	mw := NewMixedWriter(&buf)
	rev := "1-" + strings.Repeat("c", 32)
	docs := []*couchdoc.Doc{
		{ID: "plain", Rev: rev, Body: []byte(`{"a":[1,2]}`)},
		{ID: "with-att", Rev: rev, Attachments: map[string]*couchdoc.Attachment{
			"a.txt": {ContentType: "text/plain", Body: strings.NewReader("hello"), Length: 5, Digest: md5Digest([]byte("hello"))}}},
	}
	for _, d := range docs {
		if err := mw.WriteDoc(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.WriteMissing("2-" + strings.Repeat("d", 32)); err != nil {
		t.Fatal(err)
	}
	if err := mw.WriteRevError("gone", rev, couchdoc.ErrForbidden); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	fn, got := collect(t, nil)
	if err := ReadDocs(&buf, mw.ContentType(), fn); err != nil {
		t.Fatal(err)
	}
	g := *got
	if len(g) != 4 || g[0].doc.ID != "plain" || string(g[0].doc.Body) != `{"a":[1,2]}` || string(g[1].atts["a.txt"]) != "hello" {
		t.Fatalf("got %+v", g)
	}
	if !errors.Is(g[2].err, couchdoc.ErrNotFound) || !errors.Is(g[3].err, couchdoc.ErrForbidden) {
		t.Fatalf("errors: %v, %v", g[2].err, g[3].err)
	}
	// an empty answer
	buf.Reset()
	mw = NewMixedWriter(&buf)
	mw.Close()
	if err := ReadDocs(&buf, mw.ContentType(), func(*couchdoc.Doc, error) error { t.Fatal("called"); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestReadMultipartTruncated(t *testing.T) {
	resp := fixture(t, "open_revs_two_atts.http")
	all, _ := io.ReadAll(resp.Body)
	for _, cut := range []int{10, 300, len(all) / 2, len(all) - 20} {
		fn, _ := collect(t, nil)
		err := ReadDocs(bytes.NewReader(all[:cut]), resp.Header.Get("Content-Type"), fn)
		if err == nil {
			t.Fatalf("cut at %d: no error", cut)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrMalformed) && !errors.Is(err, couchdoc.ErrDigestMismatch) {
			t.Errorf("cut at %d: untyped error %v", cut, err)
		}
	}
}

func TestBodyInvalidAfterCallback(t *testing.T) {
	resp := fixture(t, "open_revs_mixed.http")
	var kept io.Reader
	err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), func(doc *couchdoc.Doc, _ error) error {
		if doc != nil && doc.Attachments["recipe.txt"] != nil {
			kept = doc.Attachments["recipe.txt"].Body
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Read(make([]byte, 10)); err == nil {
		t.Fatal("body readable after its callback")
	}
}

func TestManyAttachmentsReadBackwards(t *testing.T) {
	doc := &couchdoc.Doc{ID: "many", Rev: "1-" + strings.Repeat("a", 32), Attachments: map[string]*couchdoc.Attachment{}}
	var names []string
	for i := 0; i < 7; i++ {
		data := bytes.Repeat([]byte{byte('a' + i)}, 900<<10)
		name := string(rune('a'+i)) + ".bin"
		names = append([]string{name}, names...) // read the last part first
		doc.Attachments[name] = &couchdoc.Attachment{Body: bytes.NewReader(data), Length: int64(len(data)), Digest: md5Digest(data)}
	}
	rel, err := NewRelated(doc)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := rel.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	fn, got := collect(t, names)
	var spooled int64
	err = ReadMultipart(&buf, rel.ContentType(), func(d *couchdoc.Doc, e error) error {
		err := fn(d, e)
		spooled = d.Attachments["a.bin"].Body.(*attBody).st.spoolMem
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		b := (*got)[0].atts[n]
		if len(b) != 900<<10 || b[0] != byte('a'+6-i) {
			t.Fatalf("%s: %d bytes", n, len(b))
		}
	}
	if spooled > spoolMemTotal {
		t.Fatalf("spools hold %d bytes in memory", spooled)
	}
}
