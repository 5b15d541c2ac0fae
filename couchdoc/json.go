package couchdoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
)

// attachmentJSON is one attachment as it travels in _attachments, its
// members in CouchDB's order.
type attachmentJSON struct {
	ContentType string  `json:"content_type,omitempty"`
	RevPos      int     `json:"revpos,omitempty"`
	Digest      string  `json:"digest,omitempty"`
	Length      *int64  `json:"length,omitempty"`
	Stub        bool    `json:"stub,omitempty"`
	Follows     bool    `json:"follows,omitempty"`
	Data        *string `json:"data,omitempty"`
	Encoding    string  `json:"encoding,omitempty"`
}

// MarshalJSON encodes the document as CouchDB sends it: _id and _rev, the
// user's fields, _deleted, then _revisions and the read-only members that
// are set (_revs_info, _conflicts, _deleted_conflicts, _local_seq), then
// _attachments, in CouchDB 3.5's order. A streamed attachment is written as
// "follows" (its bytes travel in a multipart body).
func (doc *Doc) MarshalJSON() ([]byte, error) {
	return doc.AppendJSON(make([]byte, 0, len(doc.Body)+128))
}

// AppendJSON appends the document's JSON encoding to dst.
func (doc *Doc) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	member := func(key string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, key...)
		dst = append(dst, '"', ':')
	}
	if doc.ID != "" {
		member("_id")
		dst = AppendJSONString(dst, doc.ID, true)
	}
	if doc.Rev != "" {
		member("_rev")
		dst = AppendJSONString(dst, doc.Rev, true)
	}
	if inner := bodyMembers(doc.Body); len(inner) > 0 {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, inner...)
	}
	if doc.Deleted {
		member("_deleted")
		dst = append(dst, "true"...)
	}
	for _, m := range []struct {
		key string
		v   any
		set bool
	}{
		{"_revisions", doc.Revisions, doc.Revisions != nil},
		{"_revs_info", doc.RevsInfo, len(doc.RevsInfo) > 0},
		{"_conflicts", doc.Conflicts, len(doc.Conflicts) > 0},
		{"_deleted_conflicts", doc.DeletedConflicts, len(doc.DeletedConflicts) > 0},
		{"_local_seq", doc.LocalSeq, doc.LocalSeq > 0},
	} {
		if !m.set {
			continue
		}
		b, err := json.Marshal(m.v)
		if err != nil {
			return nil, err
		}
		member(m.key)
		dst = append(dst, b...)
	}
	if len(doc.Attachments) > 0 {
		member("_attachments")
		b, err := json.Marshal(doc.attachmentsJSON())
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
	}
	return append(dst, '}'), nil
}

func (doc *Doc) attachmentsJSON() map[string]attachmentJSON {
	out := make(map[string]attachmentJSON, len(doc.Attachments))
	for name, a := range doc.Attachments {
		l := a.Length
		j := attachmentJSON{ContentType: a.ContentType, Digest: a.Digest, Length: &l, RevPos: a.RevPos}
		switch {
		case a.Stub:
			j.Stub = true
			j.Encoding = a.Encoding
		case a.Data != nil && !a.Follows:
			s := base64.StdEncoding.EncodeToString(a.Data)
			j.Data = &s
		default:
			j.Follows = true
		}
		out[name] = j
	}
	return out
}

// bodyMembers returns the inside of a JSON object body, without its braces.
func bodyMembers(body json.RawMessage) []byte {
	b := bytes.TrimSpace(body)
	if len(b) < 2 || b[0] != '{' {
		return nil
	}
	return bytes.TrimSpace(b[1 : len(b)-1])
}

// plainByte marks the bytes a JSON string holds as they are and
// encoding/json writes as they are (HTML escaping aside): printable ASCII
// and DEL, but for the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for b := 0x20; b <= 0x7f; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// IsPlainString reports whether s holds only such bytes: "s" is then the
// JSON string of s, and decodes to s. Ids, revs and member names nearly
// always are, and need no encoder or decoder.
func IsPlainString[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

// AppendJSONString appends s as encoding/json encodes it, with or without
// its HTML escaping of <, > and & (json.Marshal escapes; CouchDB and the
// changes feeds do not). Ids and revs are nearly always printable ASCII
// that needs no escape: those are copied between quotes; anything else
// goes through encoding/json (which also mends invalid UTF-8).
func AppendJSONString(dst []byte, s string, escapeHTML bool) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !plainByte[c] || escapeHTML && (c == '<' || c == '>' || c == '&') {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(escapeHTML)
			_ = enc.Encode(s) // a string always encodes
			return append(dst, bytes.TrimRight(buf.Bytes(), "\n")...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
