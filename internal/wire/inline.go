package wire

import (
	"github.com/settee/settee/couchdoc"
)

// VerifyInline checks the inline (base64 "data") attachments of doc against
// their md5 digests, as ReadMultipart checks streamed ones: a mismatch is
// couchdoc.ErrDigestMismatch. Attachments without an md5 digest pass.
func VerifyInline(doc *couchdoc.Doc) error {
	for name, a := range doc.Attachments {
		if a.Stub || a.Data == nil || a.Body != nil {
			continue
		}
		v := newVerifier(nil, name, -1, a.Digest)
		if v.md5 == nil {
			continue
		}
		v.md5.Write(a.Data)
		if string(v.md5.Sum(nil)) != string(v.digest) {
			return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: md5 digest mismatch", name)
		}
	}
	return nil
}
