package wire

import (
	"strings"
)

// EscapeSegment percent-encodes everything but RFC 3986's unreserved
// characters, so '/', '+', '%', '?', '#', spaces and non-ASCII bytes of an
// id or attachment name survive any server's path decoding (CouchDB reads a
// raw '+' as a space).
func EscapeSegment(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// EscapeDocID escapes a document id for a URL path. "_design/" and
// "_local/" keep their slash, as CouchDB expects.
func EscapeDocID(id string) string {
	for _, p := range []string{"_design/", "_local/"} {
		if rest, ok := strings.CutPrefix(id, p); ok {
			return p + EscapeSegment(rest)
		}
	}
	return EscapeSegment(id)
}

// EscapeAttachment escapes an attachment name; its slashes stay, as
// CouchDB joins the path's remaining segments with '/'.
func EscapeAttachment(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = EscapeSegment(p)
	}
	return strings.Join(parts, "/")
}
