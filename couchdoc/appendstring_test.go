package couchdoc

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// encodeString is encoding/json's encoding of s.
func encodeString(s string, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// TestAppendStringMatchesMarshal: ids and revs are written byte for byte
// as encoding/json writes them, with and without HTML escaping, whether
// or not they take the fast path.
func TestAppendStringMatchesMarshal(t *testing.T) {
	cases := []string{"", "doc-00001", "1-967a00dff5e02add41819138abb3284d", `a"b`, `a\b`, "a<b>&c", "tab\there",
		"\x00\x1f\x7f", "é", "東京", "\u2028\u2029", "\xff\xfe", "_design/x", "a/b?c=d#e"}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		b := make([]byte, r.Intn(12))
		for j := range b {
			b[j] = byte(r.Intn(256))
			if r.Intn(3) > 0 {
				b[j] = byte(0x20 + r.Intn(0x5f))
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if want, _ := json.Marshal(s); !bytes.Equal(want, encodeString(s, true)) {
			t.Fatalf("%q: the encoder does not write what json.Marshal does", s)
		}
		for _, html := range []bool{true, false} {
			want := encodeString(s, html)
			if got := AppendJSONString([]byte("x"), s, html); !bytes.Equal(got, append([]byte("x"), want...)) {
				t.Fatalf("%q (escape HTML %v): got %s, want %s", s, html, got[1:], want)
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("doc-1")
	f.Add("a<\"\\\x01é")
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			if got, want := AppendJSONString(nil, s, html), encodeString(s, html); !bytes.Equal(got, want) {
				t.Fatalf("%q (escape HTML %v): got %s, want %s", s, html, got, want)
			}
		}
	})
}
