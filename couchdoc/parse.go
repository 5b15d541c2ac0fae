package couchdoc

import (
	"encoding/base64"
	"strconv"
)

// ParseDoc decodes a CouchDB document from JSON, splitting the special
// members from the user's fields (kept in their original order in Body).
// It rejects what CouchDB rejects: a non-object, unknown special members
// ("_foo"), special members of the wrong type or with bad rev ids, and an
// empty _id. An absent _id is no error: callers validate the id where one
// is needed.
// Read-only members (_conflicts, _revs_info, ...) are ignored, as CouchDB does;
// _access and the _replication_* members stay in Body (see specialInBody).
//
// The result does not alias data. Replicated documents go through here one
// by one, so it checks the syntax once (validJSON) and then reads the input
// in one pass (no tokens, no reflection on the common shapes), allocating
// little besides the result.
func ParseDoc(data []byte) (*Doc, error) {
	if !validJSON(data) {
		// Which error comes first depends on the order of members and
		// syntax errors: let the token reader decide.
		return parseDocTokens(data)
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, Errorf(ErrBadRequest, "Document must be a JSON object")
	}
	doc := &Doc{}
	body := make([]byte, 0, len(data)-i)
	body = append(body, '{')
	i++
	for {
		m, next, ok := nextMember(data, i)
		if !ok {
			break
		}
		i = next
		if len(m.key) > 2 && m.key[1] == '_' && !bodyMemberRaw(m.key) {
			if err := doc.setSpecialRaw(m); err != nil {
				return nil, err
			}
			continue
		}
		if len(m.key) > 2 && m.key[1] == '\\' {
			// An escaped first character may decode to '_'.
			if k := decodeString(m.key); k != "" && k[0] == '_' && !specialInBody[k] {
				if err := doc.setSpecial(k, m.value); err != nil {
					return nil, err
				}
				continue
			}
		}
		if len(body) > 1 {
			body = append(body, ',')
		}
		body = appendKey(body, m.key)
		body = append(body, ':')
		if m.space {
			body = appendCompactValue(body, m.value)
		} else {
			body = append(body, m.value...)
		}
	}
	body = append(body, '}')
	if cap(body) > 2*len(body)+512 {
		// Mostly special members (inline attachments): keep only the body.
		body = append([]byte(nil), body...)
	}
	doc.Body, doc.parsed = body, body
	return doc.checkRevisions()
}

// specialInBody are the special members CouchDB 3.5 keeps in the body, as
// user fields (couch_doc:transfer_fields): per-document access control,
// and the state CouchDB's replicator writes into _replicator documents.
var specialInBody = map[string]bool{
	"_access": true, "_replication_id": true, "_replication_state": true, "_replication_state_time": true,
	"_replication_state_reason": true, "_replication_stats": true,
}

// bodyMemberRaw reports whether a JSON-encoded key starting with '_' names
// one of specialInBody.
func bodyMemberRaw(key []byte) bool {
	if len(key) < len(`"_access"`) || key[2] != 'a' && key[2] != 'r' && key[2] != '\\' {
		return false
	}
	k, plain := plainString(key)
	if !plain {
		return specialInBody[decodeString(key)]
	}
	return specialInBody[string(k)]
}

// errEmptyID is CouchDB's answer to "_id": "" (couch_doc:transfer_fields
// validates every _id it reads). An absent _id is no error here.
var errEmptyID = Errorf(ErrIllegalDocID, "Document id must not be empty")

// setSpecialRaw sets the special member m (its key starts with '_'), taking
// the fast path for the common shapes and setSpecial for the rest.
func (doc *Doc) setSpecialRaw(m member) error {
	key, plain := plainString(m.key)
	if !plain {
		return doc.setSpecial(decodeString(m.key), m.value)
	}
	v := m.value
	switch string(key) {
	case "_id":
		if s, ok := plainString(v); ok {
			if len(s) == 0 {
				return errEmptyID
			}
			doc.ID = string(s)
			return nil
		}
	case "_rev":
		if s, ok := plainString(v); ok {
			doc.Rev = string(s)
			if doc.Rev != "" && !IsLocalID(doc.ID) {
				if _, _, err := ParseRev(doc.Rev); err != nil && !isLocalRev(doc.Rev) {
					return err
				}
			}
			return nil
		}
	case "_deleted":
		switch string(v) {
		case "true":
			doc.Deleted = true
			return nil
		case "false":
			doc.Deleted = false
			return nil
		}
	case "_revisions":
		if r, ok := parseRevisionsFast(v); ok {
			doc.Revisions = r
			return nil
		}
	case "_attachments":
		if v[0] == '{' {
			return doc.setAttachments(v)
		}
	case "_conflicts", "_deleted_conflicts", "_revs_info", "_local_seq":
		return nil
	}
	return doc.setSpecial(string(key), v)
}

// parseRevisionsFast reads {"start": N, "ids": ["..", ...]} when it has
// exactly that shape (keys in lower case, integer start, plain strings);
// ok is false for anything else, which json.Unmarshal then decides.
func parseRevisionsFast(v []byte) (r *Revisions, ok bool) {
	if v[0] != '{' {
		return nil, false
	}
	r = &Revisions{}
	for i := 1; ; {
		m, next, more := nextMember(v, i)
		if !more {
			return r, true
		}
		i = next
		switch string(m.key) {
		case `"start"`:
			n, ok := plainInt(m.value, strconv.IntSize)
			if !ok {
				return nil, false
			}
			r.Start = int(n)
		case `"ids"`:
			ids, ok := plainStrings(m.value)
			if !ok {
				return nil, false
			}
			r.IDs = ids
		default:
			return nil, false
		}
	}
}

// plainStrings decodes a JSON array of plain strings (see plainString) with
// one allocation for all their bytes; ok is false for anything else.
func plainStrings(v []byte) ([]string, bool) {
	if v[0] != '[' {
		return nil, false
	}
	n := 0
	for i := skipSpace(v, 1); v[i] != ']'; {
		if v[i] != '"' {
			return nil, false
		}
		e := stringEnd(v, i)
		if _, ok := plainString(v[i:e]); !ok {
			return nil, false
		}
		n++
		i = skipSpace(v, e)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	all := string(v) // the strings below share it
	ids := make([]string, 0, n)
	for i := skipSpace(v, 1); v[i] != ']'; {
		e := stringEnd(v, i)
		ids = append(ids, all[i+1:e-1])
		i = skipSpace(v, e)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return ids, true
}

// setAttachments reads the object v of _attachments. Like json.Unmarshal
// into a map, a repeated name keeps its last value, and only that is
// checked.
func (doc *Doc) setAttachments(v []byte) error {
	var ms []member
	for i := 1; ; {
		m, next, ok := nextMember(v, i)
		if !ok {
			break
		}
		i = next
		ms = append(ms, m)
	}
	names := make([]string, len(ms))
	for k, m := range ms {
		names[k] = decodeString(m.key)
	}
	var last map[string]int // for many attachments: a name's last index
	if len(ms) > 8 {
		last = make(map[string]int, len(ms))
		for k, n := range names {
			last[n] = k
		}
	}
	atts := make(map[string]*Attachment, len(ms))
	for k, m := range ms {
		if repeatedLater(names, k, last) {
			continue
		}
		a, err := parseAttachmentRaw(names[k], m.value)
		if err != nil {
			return err
		}
		atts[names[k]] = a
	}
	doc.Attachments = atts
	return nil
}

// repeatedLater reports whether names[k] is repeated after k.
func repeatedLater(names []string, k int, last map[string]int) bool {
	if last != nil {
		return last[names[k]] != k
	}
	for _, n := range names[k+1:] {
		if n == names[k] {
			return true
		}
	}
	return false
}

// attachmentFields are attachmentJSON's JSON names; json.Unmarshal matches
// them without regard to case.
var attachmentFields = []string{"content_type", "digest", "length", "revpos", "stub", "follows", "data", "encoding"}

// parseAttachmentRaw reads one attachment, decoding inline base64 data
// straight from the raw string. Shapes off the fast path (escapes, nulls,
// keys that differ from the field names only in case, wrong types) go to
// parseAttachment, which decides as json.Unmarshal does.
func parseAttachmentRaw(name string, v []byte) (*Attachment, error) {
	slow := func() (*Attachment, error) { return parseAttachment(name, v) }
	if name == "" || v[0] != '{' {
		return slow()
	}
	var j attachmentJSON
	var length int64
	hasLength := false
	var data []byte
	hasData := false
	for i := 1; ; {
		m, next, more := nextMember(v, i)
		if !more {
			break
		}
		i = next
		key, ok := plainString(m.key)
		if !ok {
			return slow()
		}
		val := m.value
		switch string(key) {
		case "content_type", "digest", "encoding":
			s, ok := plainString(val)
			if !ok {
				return slow()
			}
			switch string(key) {
			case "digest":
				j.Digest = string(s)
			case "encoding":
				j.Encoding = string(s)
			default:
				j.ContentType = string(s)
			}
		case "length":
			n, ok := plainInt(val, 64)
			if !ok {
				return slow()
			}
			length, hasLength = n, true
		case "revpos":
			n, ok := plainInt(val, strconv.IntSize)
			if !ok {
				return slow()
			}
			j.RevPos = int(n)
		case "stub", "follows":
			var b bool
			switch string(val) {
			case "true":
				b = true
			case "false":
			default:
				return slow()
			}
			if string(key) == "stub" {
				j.Stub = b
			} else {
				j.Follows = b
			}
		case "data":
			// Valid base64 has no escapes but "\/"; leave those to slow.
			if val[0] != '"' {
				return slow()
			}
			for _, c := range val[1 : len(val)-1] {
				if c == '\\' {
					return slow()
				}
			}
			data, hasData = val[1:len(val)-1], true
		default:
			for _, c := range key {
				if c >= 0x80 {
					return slow() // may fold to a field name
				}
			}
			for _, f := range attachmentFields {
				if len(f) == len(key) && equalFoldASCII(f, key) {
					return slow()
				}
			}
		}
	}
	a := &Attachment{Name: name, ContentType: j.ContentType, Digest: j.Digest, RevPos: j.RevPos, Stub: j.Stub, Follows: j.Follows, Encoding: j.Encoding}
	if hasLength {
		a.Length = length
	}
	switch {
	case hasData:
		buf := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
		n, err := base64.StdEncoding.Decode(buf, data)
		if err != nil {
			return nil, Errorf(ErrBadRequest, "Invalid attachment data for %q", name)
		}
		a.Data = buf[:n]
		a.Length = int64(n)
		a.Stub = false
	case j.Stub, j.Follows:
	default:
		return nil, Errorf(ErrBadRequest, "Attachment %q has neither data, stub nor follows", name)
	}
	return withDefaultType(a), nil
}

// withDefaultType gives an attachment without a content type CouchDB's
// default one.
func withDefaultType(a *Attachment) *Attachment {
	if a.ContentType == "" {
		a.ContentType = "application/octet-stream"
	}
	return a
}

// equalFoldASCII compares the ASCII strings f and k without regard to case.
func equalFoldASCII(f string, k []byte) bool {
	for i := 0; i < len(f); i++ {
		a, b := f[i], k[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// checkRevisions ends both parsers: a local doc's _revisions is dropped
// (CouchDB shows its "0-N" rev as {"start": 0, "ids": ["N"]}, and its
// replicator sends that back with the checkpoint: it says nothing more
// than _rev), any other must agree with _rev.
func (doc *Doc) checkRevisions() (*Doc, error) {
	if IsLocalID(doc.ID) {
		doc.Revisions = nil
	}
	if doc.Rev != "" && !IsLocalID(doc.ID) {
		// The rev as CouchDB keeps it: the store, its answers and its
		// comparisons see one spelling of each revision.
		rev, err := CanonRev(doc.Rev)
		if err != nil {
			return nil, err
		}
		doc.Rev = rev
	}
	if doc.Revisions == nil {
		return doc, nil
	}
	if doc.Rev != "" {
		if err := ValidateRevisions(doc.Rev, doc.Revisions); err != nil {
			return nil, err
		}
	} else if err := CanonRevisions(doc.Revisions); err != nil {
		return nil, err
	}
	return doc, nil
}
