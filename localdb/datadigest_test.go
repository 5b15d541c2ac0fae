package localdb_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// hashedBody is a Body that hashes itself as it is read, as package wire's
// attachment bodies do: at EOF it sets its attachment's DataDigest, to
// sum when set (a lying reader, to show what the store trusts).
type hashedBody struct {
	r   io.Reader
	att *couchdoc.Attachment
	sum string
}

func (b *hashedBody) SetsDataDigest() bool { return true }

func (b *hashedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.sum != "" {
		b.att.DataDigest = b.sum
	}
	return n, err
}

// TestStagedBodyTakesReadersDigest: a streamed body that hashed itself is
// stored under the md5 it computed (no second hash), and checked against
// a stated digest as before; one that says it hashes but ends without a
// digest is refused and leaves nothing.
func TestStagedBodyTakesReadersDigest(t *testing.T) {
	db := open(t)
	data := bytes.Repeat([]byte("0123456789abcdef"), 80<<10) // 1.25 MiB: several chunks
	att := func(stated, sum string) *couchdoc.Attachment {
		a := &couchdoc.Attachment{ContentType: "application/octet-stream", Digest: stated, Length: int64(len(data))}
		a.Body = &hashedBody{r: bytes.NewReader(data), att: a, sum: sum}
		return a
	}
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "ok", Attachments: map[string]*couchdoc.Attachment{"a": att(digest(data), digest(data))}}); err != nil {
		t.Fatal(err)
	}
	doc, err := db.Get(bg, "ok", localdb.GetOptions{Attachments: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := doc.Attachments["a"]; a.Digest != digest(data) {
		t.Fatalf("stored digest %q, want %q", a.Digest, digest(data))
	}
	// A local edit stating another digest than the bytes' is refused.
	_, err = db.Put(bg, &couchdoc.Doc{ID: "mismatch", Attachments: map[string]*couchdoc.Attachment{"a": att(digest([]byte("x")), digest(data))}})
	wantErr(t, err, couchdoc.ErrDigestMismatch)
	// A body that said it would hash itself but did not.
	if _, err = db.Put(bg, &couchdoc.Doc{ID: "unhashed", Attachments: map[string]*couchdoc.Attachment{"a": att(digest(data), "")}}); err == nil {
		t.Fatal("a body that ended without its digest was stored")
	}
	for _, id := range []string{"mismatch", "unhashed"} {
		if _, err := db.Get(bg, id, localdb.GetOptions{Attachments: true}); err == nil {
			t.Errorf("%s stored", id)
		}
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

// TestInlineDataTakesReadersDigest: inline bytes with a DataDigest are
// stored under it, and a stated digest is checked against it.
func TestInlineDataTakesReadersDigest(t *testing.T) {
	db := open(t)
	data := []byte("hello, world")
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "ok", Attachments: map[string]*couchdoc.Attachment{
		"a": {Data: data, Digest: digest(data), DataDigest: digest(data)}}}); err != nil {
		t.Fatal(err)
	}
	_, err := db.Put(bg, &couchdoc.Doc{ID: "mismatch", Attachments: map[string]*couchdoc.Attachment{
		"a": {Data: data, Digest: digest([]byte("x")), DataDigest: digest(data)}}})
	wantErr(t, err, couchdoc.ErrDigestMismatch)
	doc, err := db.Get(bg, "ok", localdb.GetOptions{Attachments: true})
	if err != nil {
		t.Fatal(err)
	}
	if a := doc.Attachments["a"]; a.Digest != digest(data) || !bytes.Equal(a.Data, data) {
		t.Fatalf("stored %+v", a)
	}
}

// BenchmarkReplicatedAttachments writes replicated documents of one 256 KB
// inline attachment each, in batches of 20, as a pull does, with the
// attachments' md5 hashed by the store (as before) or passed down by the
// reader that checked them (DataDigest).
func BenchmarkReplicatedAttachments(b *testing.B) {
	for _, passed := range []bool{false, true} {
		name := "hashed-by-store"
		if passed {
			name = "digest-passed"
		}
		b.Run(name, func(b *testing.B) {
			db := benchDB(b)
			b.SetBytes(20 * 256 << 10)
			for i := 0; i < b.N; i++ {
				b.StopTimer() // the bytes and their digest come from the reader
				docs := replBatch(i*20, 20)
				for k, d := range docs {
					data := bytes.Repeat([]byte(fmt.Sprintf("%015d\n", i*20+k)), 16<<10) // distinct content
					sum := digest(data)
					a := &couchdoc.Attachment{ContentType: "application/octet-stream", Digest: sum, Length: int64(len(data)), RevPos: 1, Data: data}
					if passed {
						a.DataDigest = sum
					}
					d.Attachments = map[string]*couchdoc.Attachment{"a": a}
				}
				b.StartTimer()
				if res, err := db.BulkDocs(bg, docs, false); err != nil || !res[19].OK {
					b.Fatal(err, res)
				}
			}
		})
	}
}
