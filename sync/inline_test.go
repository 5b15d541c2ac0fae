package sync

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// TestReadInline checks which streamed attachment bodies readInline takes
// into memory, and that a body it gives up on still streams whole.
func TestReadInline(t *testing.T) {
	att := func(n int, declared bool) *couchdoc.Attachment {
		a := &couchdoc.Attachment{Body: bytes.NewReader(bytes.Repeat([]byte("z"), n)), Follows: true}
		if declared {
			a.Length = int64(n)
		}
		return a
	}
	doc := func(atts ...*couchdoc.Attachment) *couchdoc.Doc {
		d := &couchdoc.Doc{ID: "d", Attachments: map[string]*couchdoc.Attachment{}}
		for i, a := range atts {
			d.Attachments[string(rune('a'+i))] = a
		}
		return d
	}

	// Within the bound: every body becomes Data.
	d := doc(att(300, true), att(700, true), &couchdoc.Attachment{Stub: true})
	if err := readInline(d, 1000); err != nil {
		t.Fatal(err)
	}
	if hasBody(d) || len(d.Attachments["a"].Data) != 300 || len(d.Attachments["b"].Data) != 700 || d.Attachments["a"].Follows {
		t.Fatalf("within the bound: %+v %+v", d.Attachments["a"], d.Attachments["b"])
	}

	// Declared lengths past the bound: nothing is read.
	d = doc(att(600, true), att(600, true))
	if err := readInline(d, 1000); err != nil {
		t.Fatal(err)
	}
	for _, a := range d.Attachments {
		if a.Data != nil || a.Body.(*bytes.Reader).Len() != 600 {
			t.Fatalf("declared past the bound: read %d", 600-a.Body.(*bytes.Reader).Len())
		}
	}

	// Undeclared length past the bound: the body still yields every byte.
	d = doc(att(1500, false))
	if err := readInline(d, 1000); err != nil {
		t.Fatal(err)
	}
	a := d.Attachments["a"]
	if a.Data != nil || a.Body == nil {
		t.Fatalf("undeclared past the bound: Data %d, Body %v", len(a.Data), a.Body)
	}
	if b, _ := io.ReadAll(a.Body); len(b) != 1500 {
		t.Fatalf("undeclared past the bound: the body gives %d bytes, want 1500", len(b))
	}

	// A declared length that lies (short or long) still reads the body
	// whole, no more.
	d = doc(att(400, false), att(300, false))
	d.Attachments["a"].Length, d.Attachments["b"].Length = 10, 900
	if err := readInline(d, 1000); err != nil {
		t.Fatal(err)
	}
	if len(d.Attachments["a"].Data) != 400 || len(d.Attachments["b"].Data) != 300 {
		t.Fatalf("lying lengths: read %d and %d, want 400 and 300", len(d.Attachments["a"].Data), len(d.Attachments["b"].Data))
	}

	// A failing body is an error.
	boom := errors.New("digest mismatch")
	d = doc(&couchdoc.Attachment{Body: io.MultiReader(strings.NewReader("abc"), errReader{boom})})
	if err := readInline(d, 1000); !errors.Is(err, boom) {
		t.Fatalf("failing body: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// inlineMem is a memPeer target that takes inline attachment bytes in
// BulkDocs as cheaply as streamed ones, as the local store does.
type inlineMem struct {
	*memPeer
	bulkDocs atomic.Int32 // documents written with BulkDocs
}

func (p *inlineMem) InlineAttachmentMax() int64 { return 1 << 20 }

func (p *inlineMem) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	p.bulkDocs.Add(int32(len(docs)))
	return p.memPeer.BulkDocs(ctx, docs)
}

// TestInlineWriterBatchesMidSizeAttachments: into an InlineWriter, a
// document with 64 KiB to 1 MiB of attachments (streamed by the source)
// is read into memory and written in a batch, not alone with PutDoc;
// past 1 MiB it still streams alone.
func TestInlineWriterBatchesMidSizeAttachments(t *testing.T) {
	src := newMemPeer("src")
	tgt := &inlineMem{memPeer: newMemPeer("tgt")}
	sizes := map[string]int{"small": 1 << 10, "a64k": 64 << 10, "b200k": 200 << 10, "c700k": 700 << 10, "d1m": 1 << 20, "huge": 3 << 20}
	for id, n := range sizes {
		data := bytes.Repeat([]byte{'x'}, n)
		src.store(&couchdoc.Doc{ID: id, Rev: "1-a", Body: []byte(`{}`), Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"a"}},
			Attachments: map[string]*couchdoc.Attachment{"f": {ContentType: "application/octet-stream", Data: data, Length: int64(n), RevPos: 1}}})
	}
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, noEmptyTargetShortcut: true, Workers: 1})
	if err != nil || res.Stats.DocsWritten != int64(len(sizes)) {
		t.Fatalf("%v %+v", err, res)
	}
	if n := tgt.putDocs.Load(); n != 1 {
		t.Errorf("%d documents written alone with PutDoc, want 1 (the 3 MiB one)", n)
	}
	if n := tgt.bulkDocs.Load(); n != int32(len(sizes)-1) {
		t.Errorf("%d documents written in batches, want %d", n, len(sizes)-1)
	}
	for id, n := range sizes {
		d := tgt.docs[id]
		if d == nil || len(d.leaves["1-a"].Attachments["f"].Data) != n {
			t.Errorf("%s: not written whole", id)
		}
	}
}

// TestWriteAlone: which documents go alone with PutDoc, by target.
func TestWriteAlone(t *testing.T) {
	withData := func(n int) *couchdoc.Doc {
		return &couchdoc.Doc{Attachments: map[string]*couchdoc.Attachment{"a": {Data: make([]byte, n)}, "s": {Stub: true, Length: 1 << 30}}}
	}
	streamed := &couchdoc.Doc{Attachments: map[string]*couchdoc.Attachment{"a": {Body: strings.NewReader("x")}}}
	const httpMax = 64 << 10 // sync/couch's InlineMax (that package imports this one)
	for _, c := range []struct {
		name      string
		doc       *couchdoc.Doc
		inlineMax int64
		want      bool
	}{
		{"streamed, not inline", streamed, 0, true},
		{"streamed, inline target", streamed, 1 << 20, true},
		{"64 KiB inline, not inline", withData(putDocMin), 0, true},
		{"64 KiB inline, inline target", withData(putDocMin), 1 << 20, false},
		{"64 KiB inline, HTTP target", withData(putDocMin), httpMax, false},
		{"past the HTTP target's max", withData(httpMax + 1), httpMax, true},
		{"past the local store's max", withData(1<<20 + 1), 1 << 20, true},
		{"small inline, not inline", withData(100), 0, false},
		{"stubs only", &couchdoc.Doc{Attachments: map[string]*couchdoc.Attachment{"s": {Stub: true, Length: 1 << 30}}}, 0, false},
	} {
		if got := writeAlone(c.doc, c.inlineMax); got != c.want {
			t.Errorf("%s: writeAlone = %v, want %v", c.name, got, c.want)
		}
	}
}

// BenchmarkReadInline reads a 250 KB streamed attachment into memory as
// readInline does, with the announced length as a size hint and without
// (io.ReadAll): compare B/op and allocs/op.
func BenchmarkReadInline(b *testing.B) {
	data := bytes.Repeat([]byte("z"), 250<<10)
	for _, c := range []struct {
		name string
		hint int64
	}{{"io.ReadAll", 0}, {"sized", int64(len(data))}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				r := io.LimitReader(bytes.NewReader(data), 1<<20)
				got, err := readAllSized(struct{ io.Reader }{r}, c.hint)
				if err != nil || len(got) != len(data) {
					b.Fatal(err, len(got))
				}
			}
		})
	}
}
