package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// The rows' documents (include_docs=true) are handed out whole, in their
// own memory, across the reader's buffer boundaries; other members are
// decoded and checked as before.
func TestReadChangesDocs(t *testing.T) {
	big := strings.Repeat("é\\\"x", 30000) // past the 32 KB buffer, with escapes
	body := `{"results":[` +
		`{"seq":1,"id":"a","changes":[{"rev":"1-a"}],"doc":{"_id":"a","_rev":"1-a","s":"` + big + `"}},` +
		`{"seq":"2-x","junk":{"k":[1,2]},"id":"b","changes":[{"rev":"2-b"},{"rev":"1-c"}],"deleted":true,"doc":null},` +
		`{"id":"ignored","seq":3,"id":"c","changes":[{"rev":"1-c"}],"doc":{"_id":"c","_rev":"1-c"}}` +
		`],"last_seq":"3-z","pending":7}`
	var rows []*couchdoc.Change
	last, pending, err := ReadChangesPending(strings.NewReader(body), func(c *couchdoc.Change) error {
		rows = append(rows, c)
		return nil
	})
	if err != nil || string(last) != `"3-z"` || pending != 7 || len(rows) != 3 {
		t.Fatalf("last %s pending %d rows %d err %v", last, pending, len(rows), err)
	}
	if d, err := couchdoc.ParseDoc(rows[0].Doc); err != nil || d.ID != "a" || !bytes.Contains(d.Body, []byte(big)) {
		t.Fatalf("row a's doc: %v", err)
	}
	if r := rows[1]; string(r.Seq) != `"2-x"` || r.ID != "b" || !r.Deleted || len(r.Changes) != 2 || r.Changes[1].Rev != "1-c" || string(r.Doc) != "null" {
		t.Fatalf("row b: %+v", r)
	}
	if r := rows[2]; r.ID != "c" || string(r.Seq) != "3" || string(r.Doc) != `{"_id":"c","_rev":"1-c"}` {
		t.Fatalf("row c: %+v", r)
	}

	// Bad members other than doc are malformed; a cut row is an early end.
	for _, bad := range []string{
		`{"results":[{"seq":1,"id":7,"changes":[]}],"last_seq":1}`,
		`{"results":[{"seq":1,"id":"a","changes":{}}],"last_seq":1}`,
		`{"results":[{"seq":1,"id":"a","changes":[],"deleted":"yes"}],"last_seq":1}`,
		`{"results":[{"seq":1,"id":"a","changes":[],"junk":[1,]}],"last_seq":1}`,
		`{"results":[{"seq":tru,"id":"a","changes":[]}],"last_seq":1}`,
		`{"results":[{"seq":1,"id":"a","changes":[]}],"last_seq":1,"pending":[}`,
		`{"results":[{"seq":1,"id":"a","changes":[]} {"seq":2}],"last_seq":1}`,
	} {
		_, _, err := ReadChangesPending(strings.NewReader(bad), func(*couchdoc.Change) error { return nil })
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want malformed", bad, err)
		}
	}
	_, _, err = ReadChangesPending(strings.NewReader(body[:len(body)/2]), func(*couchdoc.Change) error { return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut in a doc: %v", err)
	}
	// An error body is the peer's error.
	_, _, err = ReadChangesPending(strings.NewReader(`{"error":"unauthorized","reason":"no"}`), func(*couchdoc.Change) error { return nil })
	if !errors.Is(err, couchdoc.ErrUnauthorized) {
		t.Errorf("error body: %v", err)
	}
}

// BenchmarkReadChangesDocs reads a feed with include_docs=true (500 rows
// of 1-KB documents, a pull's batch) as sync's pipeline does: the rows,
// then each document parsed.
func BenchmarkReadChangesDocs(b *testing.B) {
	const rows = 500
	data := feedBody(rows, true)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		_, _, err := ReadChangesPending(bytes.NewReader(data), func(c *couchdoc.Change) error {
			if _, err := couchdoc.ParseDoc(c.Doc); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil || n != rows {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
