package wire

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// fixtureBody returns a recorded response's body and Content-Type.
func fixtureBody(t testing.TB, name string) ([]byte, string) {
	resp := fixture(t, name)
	b, _ := io.ReadAll(resp.Body)
	return b, resp.Header.Get("Content-Type")
}

func FuzzReadChanges(f *testing.F) {
	for _, n := range []string{"changes_normal.http", "changes_empty.http", "changes_garbled.http"} {
		b, _ := fixtureBody(f, n)
		f.Add(b)
	}
	f.Add([]byte(`{"results":[{"seq":1,"id":"a","changes":[{"rev":"1-a"}]}],"last_seq":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		last, _, err := ReadChangesPending(bytes.NewReader(data), func(c *couchdoc.Change) error {
			if c.ID == "" || !validSeq(c.Seq) {
				t.Fatalf("bad row handed out: %+v", c)
			}
			return nil
		})
		if err == nil && !validSeq(last) {
			t.Fatalf("no error and bad last_seq %q", last)
		}
	})
}

func FuzzReadContinuousChanges(f *testing.F) {
	b, _ := fixtureBody(f, "changes_continuous.http")
	f.Add(b)
	f.Add([]byte("\n\n{\"last_seq\":3}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ReadContinuousChanges(bytes.NewReader(data), func(c *couchdoc.Change) error {
			if c.ID == "" || !validSeq(c.Seq) {
				t.Fatalf("bad row handed out: %+v", c)
			}
			return nil
		})
	})
}

func FuzzReadMultipart(f *testing.F) {
	for _, n := range []string{"open_revs_mixed.http", "bulk_get_mixed.http", "open_revs_two_atts.http"} {
		b, ct := fixtureBody(f, n)
		f.Add(b, ct, false)
		f.Add(b, ct, true)
	}
	f.Add([]byte("--b\r\nContent-Type: application/json\r\n\r\n{\"_id\":\"a\"}\r\n--b--"), `multipart/related; boundary="b"`, false)
	f.Fuzz(func(t *testing.T, data []byte, ct string, reverse bool) {
		_ = ReadDocs(bytes.NewReader(data), ct, func(doc *couchdoc.Doc, revErr error) error {
			if (doc == nil) == (revErr == nil) {
				t.Fatalf("doc %v and revErr %v", doc, revErr)
			}
			if doc == nil {
				return nil
			}
			var names []string
			for n, a := range doc.Attachments {
				if a.Body != nil {
					names = append(names, n)
				}
			}
			if reverse {
				for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
					names[i], names[j] = names[j], names[i]
				}
			}
			for _, n := range names {
				a := doc.Attachments[n]
				got, err := io.Copy(io.Discard, a.Body)
				if err == nil && a.Length > 0 && got != a.Length {
					t.Fatalf("attachment %q: %d bytes accepted, length %d", n, got, a.Length)
				}
			}
			return nil
		})
	})
}

func FuzzReadBulkGet(f *testing.F) {
	b, _ := fixtureBody(f, "bulk_get_json.http")
	f.Add(b)
	f.Add([]byte(`{"results":[{"id":"a","docs":[{"error":{"id":"a","rev":"1-a","error":"not_found","reason":"missing"}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = ReadBulkGet(bytes.NewReader(data), func(doc *couchdoc.Doc, revErr error) error {
			if (doc == nil) == (revErr == nil) {
				t.Fatalf("doc %v and revErr %v", doc, revErr)
			}
			return nil
		})
		_ = ReadOpenRevsJSON(bytes.NewReader(data), func(*couchdoc.Doc, error) error { return nil })
	})
}

func FuzzParseRevsDiff(f *testing.F) {
	b, _ := fixtureBody(f, "revs_diff.http")
	f.Add(b)
	f.Add([]byte(`{"a":{"missing":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if m, err := ParseRevsDiff(data); err == nil && m == nil {
			t.Fatal("nil map without error")
		}
		_, _ = ReadBulkDocsResult(bytes.NewReader(data))
		_ = ParseError(http.StatusInternalServerError, data)
		_ = strings.TrimSpace(string(data))
	})
}
