package sync

import (
	"bytes"
	"errors"
	"io"
	"strings"
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
	if hasStreamedAttachments(d) || len(d.Attachments["a"].Data) != 300 || len(d.Attachments["b"].Data) != 700 || d.Attachments["a"].Follows {
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

	// A failing body is an error.
	boom := errors.New("digest mismatch")
	d = doc(&couchdoc.Attachment{Body: io.MultiReader(strings.NewReader("abc"), errReader{boom})})
	if err := readInline(d, 1000); !errors.Is(err, boom) {
		t.Fatalf("failing body: %v", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
