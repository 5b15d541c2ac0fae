package wire

import (
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// TestBodyDataDigest: an attachment body read to its end leaves the md5 of
// the bytes it yielded (decoded, for the gzip part) in DataDigest, so the
// store need not hash them again; one left unread inside the callback is
// not marked, and neither is one whose bytes fail the check.
func TestBodyDataDigest(t *testing.T) {
	for _, order := range [][]string{{"zeta.bin", "alpha.txt"}, {"alpha.txt", "zeta.bin"}, {"alpha.txt"}} {
		resp := fixture(t, "open_revs_two_atts.http")
		var doc *couchdoc.Doc
		read := map[string][]byte{}
		err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), func(d *couchdoc.Doc, revErr error) error {
			doc = d
			for _, n := range order {
				a := d.Attachments[n]
				if sd, ok := a.Body.(interface{ SetsDataDigest() bool }); !ok || !sd.SetsDataDigest() {
					t.Errorf("order %v: %s body does not say it sets DataDigest", order, n)
				}
				if a.DataDigest != "" {
					t.Errorf("order %v: %s DataDigest %q before it was read", order, n, a.DataDigest)
				}
				b, err := io.ReadAll(a.Body)
				if err != nil {
					return err
				}
				read[n] = b
			}
			return nil
		})
		if err != nil {
			t.Fatalf("order %v: %v", order, err)
		}
		for _, n := range []string{"alpha.txt", "zeta.bin"} {
			a := doc.Attachments[n]
			b, ok := read[n]
			switch {
			case ok && a.DataDigest != md5Digest(b):
				t.Errorf("order %v: %s DataDigest %q, want md5 of its %d bytes %q", order, n, a.DataDigest, len(b), md5Digest(b))
			case !ok && a.DataDigest != "":
				t.Errorf("order %v: %s unread in the callback, DataDigest %q", order, n, a.DataDigest)
			}
		}
	}

	resp := fixture(t, "open_revs_bad_digest.http")
	var doc *couchdoc.Doc
	err := ReadDocs(resp.Body, resp.Header.Get("Content-Type"), func(d *couchdoc.Doc, revErr error) error {
		doc = d
		for _, a := range d.Attachments {
			if a.Body != nil {
				if _, err := io.Copy(io.Discard, a.Body); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		t.Fatal("bad digest read without error")
	}
	for n, a := range doc.Attachments {
		if a.DataDigest != "" && a.DataDigest != a.Digest {
			t.Errorf("%s: DataDigest %q set over bytes that failed their digest %q", n, a.DataDigest, a.Digest)
		}
	}
}

// TestInlineDataDigest: VerifyInline leaves the md5 of each checked inline
// attachment's Data in DataDigest, also when the stated digest is of the
// gzip bytes CouchDB stores, and none when the check fails.
func TestInlineDataDigest(t *testing.T) {
	data := []byte("hello, world\n")
	good := `{"_id":"a","_rev":"1-917fa2381192822767f010b95b45325b","_attachments":{"t":{"content_type":"text/plain","digest":"` + md5Digest(data) + `","data":"aGVsbG8sIHdvcmxkCg=="}}}`
	other := md5Digest([]byte("other"))
	bad := strings.Replace(good, md5Digest(data), other, 1)
	gz := strings.Replace(bad, `"digest"`, `"encoding":"gzip","digest"`, 1)
	for _, c := range []struct {
		name, raw string
		wantErr   bool
	}{{"good", good, false}, {"bad", bad, true}, {"gzip-stored", gz, false}} {
		doc, err := couchdoc.ParseDoc([]byte(c.raw))
		if err != nil {
			t.Fatal(err)
		}
		err = VerifyInline(doc, []byte(c.raw))
		a := doc.Attachments["t"]
		if (err != nil) != c.wantErr {
			t.Fatalf("%s: err = %v", c.name, err)
		}
		want := md5Digest(data)
		if c.wantErr {
			want = ""
		}
		if a.DataDigest != want {
			t.Errorf("%s: DataDigest %q, want %q", c.name, a.DataDigest, want)
		}
	}
}
