package wire

import (
	"encoding/json"

	"github.com/settee/settee/couchdoc"
)

// VerifyInline checks the inline (base64 "data") attachments of doc, parsed
// from raw, against their md5 digests, as ReadMultipart checks streamed
// ones: a mismatch is couchdoc.ErrDigestMismatch. Attachments without an
// md5 digest pass, and so do those raw marks "encoding": "gzip" (asked for
// with att_encoding_info=true): CouchDB states their digest over the gzip
// bytes it stores, and sends the decoded ones inline. Each attachment it
// hashed gets the md5 of its Data as DataDigest.
func VerifyInline(doc *couchdoc.Doc, raw []byte) error {
	for name, a := range doc.Attachments {
		if a.Stub || a.Data == nil || a.Body != nil {
			continue
		}
		v := newVerifier(nil, name, -1, a.Digest)
		if v.md5 == nil {
			continue
		}
		v.md5.Write(a.Data)
		sum := v.md5.Sum(nil)
		if string(sum) != string(v.digest) && !gzipStored(raw, name) {
			return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: md5 digest mismatch", name)
		}
		a.DataDigest = md5String(sum)
	}
	return nil
}

// gzipStored reports whether the document JSON marks an attachment as
// stored gzip-encoded. It is read only after a mismatch, so the common
// path parses nothing twice.
func gzipStored(raw []byte, name string) bool {
	var d struct {
		Atts map[string]struct {
			Encoding string `json:"encoding"`
		} `json:"_attachments"`
	}
	return json.Unmarshal(raw, &d) == nil && d.Atts[name].Encoding == "gzip"
}
