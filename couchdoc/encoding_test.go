package couchdoc

import (
	"strings"
	"testing"
)

// A stub's "encoding" (att_encoding_info=true) is read on the fast path,
// on the slow one, and written back for stubs only.
func TestAttachmentEncoding(t *testing.T) {
	for _, in := range []string{
		`{"_id":"d","_attachments":{"t":{"stub":true,"digest":"md5-x","length":3,"revpos":1,"encoding":"gzip"}}}`,
		`{"_id":"d","_attachments":{"t":{"stub":true,"digest":"md5-x","length":3,"revpos":1,"encoding":"gz\u0069p"}}}`,
	} {
		for name, parse := range map[string]func([]byte) (*Doc, error){"ParseDoc": ParseDoc, "tokens": parseDocTokens} {
			d, err := parse([]byte(in))
			if err != nil || d.Attachments["t"].Encoding != "gzip" {
				t.Fatalf("%s %s: %+v %v", name, in, d, err)
			}
			out, _ := d.MarshalJSON()
			if !strings.Contains(string(out), `"encoding":"gzip"`) {
				t.Fatalf("stub lost its encoding: %s", out)
			}
			d.Attachments["t"].Stub, d.Attachments["t"].Data = false, []byte("abc")
			if out, _ := d.MarshalJSON(); strings.Contains(string(out), "encoding") {
				t.Fatalf("bytes sent decoded must not say gzip: %s", out)
			}
		}
	}
}
