package localdb_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// oldRowJSON is how Change.MarshalJSON encoded a row before it wrote it
// directly: Row through a json.Encoder without HTML escaping.
func oldRowJSON(t testing.TB, c *localdb.Change) []byte {
	row, err := c.Row()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(row); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Change.MarshalJSON writes exactly the bytes encoding/json wrote for the
// row, and what a caller's json.Encoder makes of it is the same again.
func TestChangeMarshalJSON(t *testing.T) {
	doc := &couchdoc.Doc{ID: "a<b>&\u2028\"é\x01", Rev: "2-abc", Body: []byte(`{"x":"<&>","n":[1,2.5,null],"o":{"k":"\u00e9"}}`),
		Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{"abc", "def"}}, Conflicts: []string{"2-zzz"},
		Attachments: map[string]*couchdoc.Attachment{"f<1>.txt": {ContentType: "text/html; x=<y>", Digest: "md5-AAAA", Length: 3, RevPos: 1, Stub: true}}}
	for _, c := range []*localdb.Change{
		{Seq: 1, ID: "plain", Revs: []string{"1-a"}},
		{Seq: 1 << 40, ID: "a<b>&\u2028\"é\x01\x7f", Revs: []string{"2-b", "1-\"q\""}, Deleted: true},
		{Seq: 3, ID: "d", Revs: nil},
		{Seq: 4, ID: doc.ID, Revs: []string{"2-abc", "2-zzz"}, Doc: doc},
		{Seq: 5, ID: "del", Revs: []string{"3-x"}, Deleted: true, Doc: &couchdoc.Doc{ID: "del", Rev: "3-x", Deleted: true, Body: []byte(`{}`)}},
	} {
		got, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if want := oldRowJSON(t, c); !bytes.Equal(got, want) {
			t.Errorf("row %d:\n got %s\nwant %s", c.Seq, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil || !bytes.Equal(bytes.TrimRight(buf.Bytes(), "\n"), got) {
			t.Errorf("row %d through an encoder: %s, %v", c.Seq, buf.Bytes(), err)
		}
	}
}

// BenchmarkChangeMarshal encodes a feed row with a 1-KB document as
// settee serve did (old: Row through a json.Encoder, then the server's
// json.Encoder compacting that again) and as it does now (MarshalJSON).
func BenchmarkChangeMarshal(b *testing.B) {
	c := &localdb.Change{Seq: 12345, ID: "doc-00012345", Revs: []string{"1-0123456789abcdef0123456789abcdef"},
		Doc: &couchdoc.Doc{ID: "doc-00012345", Rev: "1-0123456789abcdef0123456789abcdef", Body: body1K(1)}}
	b.Run("old", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			// The old MarshalJSON (Row through an encoder), then the
			// server's encoder compacting its output again.
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(json.RawMessage(oldRowJSON(b, c))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := c.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
