package couchdoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// ParseDoc decodes a CouchDB document from JSON, splitting the special
// members from the user's fields (kept in their original order in Body).
// It rejects what CouchDB rejects: a non-object, unknown special members
// ("_foo"), and special members of the wrong type or with bad rev ids. The
// _id is not required here: callers validate it where one is needed.
// Read-only members (_conflicts, _revs_info, ...) are ignored, as CouchDB does.
func ParseDoc(data []byte) (*Doc, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, Errorf(ErrBadRequest, "invalid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, Errorf(ErrBadRequest, "Document must be a JSON object")
	}
	doc := &Doc{}
	body := make([]byte, 0, len(data))
	body = append(body, '{')
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, Errorf(ErrBadRequest, "invalid JSON: %v", err)
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, Errorf(ErrBadRequest, "invalid JSON: %v", err)
		}
		if len(key) == 0 || key[0] != '_' {
			if len(body) > 1 {
				body = append(body, ',')
			}
			kb, _ := json.Marshal(key)
			body = append(body, kb...)
			body = append(body, ':')
			body = appendCompact(body, raw)
			continue
		}
		if err := doc.setSpecial(key, raw); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, Errorf(ErrBadRequest, "invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Errorf(ErrBadRequest, "invalid JSON: trailing data after the document")
	}
	doc.Body = append(body, '}')
	if doc.Rev != "" && doc.Revisions != nil {
		if err := ValidateRevisions(doc.Rev, doc.Revisions); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func appendCompact(dst []byte, raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(dst, raw...)
	}
	return append(dst, b.Bytes()...)
}

func (doc *Doc) setSpecial(key string, raw json.RawMessage) error {
	bad := func() error { return Errorf(ErrDocValidation, "Bad special document member: %s", key) }
	switch key {
	case "_id":
		if err := json.Unmarshal(raw, &doc.ID); err != nil {
			return Errorf(ErrBadRequest, "Document id must be a string")
		}
	case "_rev":
		if err := json.Unmarshal(raw, &doc.Rev); err != nil {
			return Errorf(ErrBadRequest, "Invalid rev format")
		}
		if doc.Rev != "" && !IsLocalID(doc.ID) {
			if _, _, err := ParseRev(doc.Rev); err != nil && !isLocalRev(doc.Rev) {
				return err
			}
		}
	case "_deleted":
		if err := json.Unmarshal(raw, &doc.Deleted); err != nil {
			return bad()
		}
	case "_revisions":
		var r Revisions
		if err := json.Unmarshal(raw, &r); err != nil {
			return Errorf(ErrBadRequest, "_revisions must be {\"start\": N, \"ids\": [...]}")
		}
		doc.Revisions = &r
	case "_attachments":
		if string(raw) == "null" {
			return nil
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return Errorf(ErrBadRequest, "_attachments must be an object")
		}
		doc.Attachments = make(map[string]*Attachment, len(m))
		for name, araw := range m {
			a, err := parseAttachment(name, araw)
			if err != nil {
				return err
			}
			doc.Attachments[name] = a
		}
	case "_conflicts", "_deleted_conflicts", "_revs_info", "_local_seq":
		// Read-only members: CouchDB ignores them on input.
	default:
		return bad()
	}
	return nil
}

// isLocalRev reports whether rev is a local document revision "0-N".
func isLocalRev(rev string) bool {
	if len(rev) < 3 || rev[:2] != "0-" {
		return false
	}
	_, err := strconv.Atoi(rev[2:])
	return err == nil
}

type attachmentJSON struct {
	ContentType string  `json:"content_type,omitempty"`
	Digest      string  `json:"digest,omitempty"`
	Length      *int64  `json:"length,omitempty"`
	RevPos      int     `json:"revpos,omitempty"`
	Stub        bool    `json:"stub,omitempty"`
	Follows     bool    `json:"follows,omitempty"`
	Data        *string `json:"data,omitempty"`
}

func parseAttachment(name string, raw json.RawMessage) (*Attachment, error) {
	if name == "" {
		return nil, Errorf(ErrBadRequest, "Attachment name must not be empty")
	}
	var j attachmentJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, Errorf(ErrBadRequest, "Invalid attachment %q: %v", name, err)
	}
	a := &Attachment{Name: name, ContentType: j.ContentType, Digest: j.Digest, RevPos: j.RevPos, Stub: j.Stub, Follows: j.Follows}
	if j.Length != nil {
		a.Length = *j.Length
	}
	switch {
	case j.Data != nil:
		data, err := base64.StdEncoding.DecodeString(*j.Data)
		if err != nil {
			return nil, Errorf(ErrBadRequest, "Invalid attachment data for %q", name)
		}
		a.Data = data
		a.Length = int64(len(data))
		a.Stub = false
	case j.Stub, j.Follows:
	default:
		return nil, Errorf(ErrBadRequest, "Attachment %q has neither data, stub nor follows", name)
	}
	if a.ContentType == "" {
		a.ContentType = "application/octet-stream"
	}
	return a, nil
}

// MarshalJSON encodes the document as CouchDB sends it: _id, _rev and
// _deleted first, then the user's fields, then _attachments, _revisions and
// the read-only members that are set. A streamed attachment is written as
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
		dst = appendString(dst, doc.ID)
	}
	if doc.Rev != "" {
		member("_rev")
		dst = appendString(dst, doc.Rev)
	}
	if doc.Deleted {
		member("_deleted")
		dst = append(dst, "true"...)
	}
	if inner := bodyMembers(doc.Body); len(inner) > 0 {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, inner...)
	}
	if len(doc.Attachments) > 0 {
		member("_attachments")
		b, err := json.Marshal(doc.attachmentsJSON())
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
	}
	for _, m := range []struct {
		key string
		v   any
		set bool
	}{
		{"_revisions", doc.Revisions, doc.Revisions != nil},
		{"_conflicts", doc.Conflicts, len(doc.Conflicts) > 0},
		{"_deleted_conflicts", doc.DeletedConflicts, len(doc.DeletedConflicts) > 0},
		{"_revs_info", doc.RevsInfo, len(doc.RevsInfo) > 0},
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

func appendString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// CanonicalBody returns body re-encoded with sorted keys at every level and
// no insignificant space, the form hashed into new revision ids.
func CanonicalBody(body json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, Errorf(ErrBadRequest, "invalid JSON body: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, Errorf(ErrBadRequest, "Document must be a JSON object")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, errors.New("canonical body: " + err.Error())
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
