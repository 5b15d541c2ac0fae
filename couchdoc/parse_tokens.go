package couchdoc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
)

// parseDocTokens is ParseDoc token by token with encoding/json: the
// reference behaviour. ParseDoc uses it for input that is not valid JSON,
// where the order in which it meets members and syntax errors decides which
// error is returned, and parseAttachment for attachments off its fast path.
func parseDocTokens(data []byte) (*Doc, error) {
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
		if len(key) == 0 || key[0] != '_' || specialInBody[key] {
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
	return doc.checkRevisions()
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
		if doc.ID == "" {
			return errEmptyID
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
			return Errorf(ErrDocValidation, "_revisions must be {\"start\": N, \"ids\": [...]}")
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

func parseAttachment(name string, raw json.RawMessage) (*Attachment, error) {
	if name == "" {
		return nil, Errorf(ErrBadRequest, "Attachment name must not be empty")
	}
	var j attachmentJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, Errorf(ErrBadRequest, "Invalid attachment %q: %v", name, err)
	}
	a := &Attachment{Name: name, ContentType: j.ContentType, Digest: j.Digest, RevPos: j.RevPos, Stub: j.Stub, Follows: j.Follows, Encoding: j.Encoding}
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
	return withDefaultType(a), nil
}
