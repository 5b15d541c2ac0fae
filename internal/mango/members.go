package mango

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errNotObject is DecodeMembers' answer for a body it cannot read as one
// JSON object.
var errNotObject = errors.New("mango: not a JSON object")

// TopField returns the top-level member name a dotted field path starts
// with ("a.b" gives "a", "a\.b" gives "a.b").
func TopField(field string) string { return splitPath(field)[0] }

// DecodeMembers decodes the members of the JSON object body whose names
// are in names (numbers as json.Number, as a decoder with UseNumber gives
// them) and skips the others without decoding them: an indexer needs only
// the indexed fields, and decoding a whole document costs more than
// writing its index entries. A name given twice keeps its last value, as
// encoding/json does. It returns an error for a body that is not one
// object; the caller then knows nothing about the document (bodies the
// store holds are valid JSON, so that is not expected).
func DecodeMembers(body []byte, names map[string]bool) (map[string]any, error) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, errNotObject
	}
	out := make(map[string]any, len(names))
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return out, trailing(body, i+1)
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return nil, errNotObject
		}
		end, esc := skipString(body, i)
		if end < 0 {
			return nil, errNotObject
		}
		rawKey := body[i:end]
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, errNotObject
		}
		i = skipSpace(body, i+1)
		vend := skipValue(body, i)
		if vend < 0 {
			return nil, errNotObject
		}
		var key string
		switch {
		case !esc && isPlainString(rawKey[1:len(rawKey)-1]):
			if !names[string(rawKey[1:len(rawKey)-1])] { // no allocation
				break
			}
			key = string(rawKey[1 : len(rawKey)-1])
		default:
			if k, ok := memberName(rawKey, esc); !ok {
				return nil, errNotObject
			} else if names[k] {
				key = k
			}
		}
		if key != "" || (names[""] && len(rawKey) == 2) {
			v, err := decodeValue(body[i:vend])
			if err != nil {
				return nil, err
			}
			out[key] = v
		}
		i = skipSpace(body, vend)
		if i >= len(body) {
			return nil, errNotObject
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return out, trailing(body, i+1)
		default:
			return nil, errNotObject
		}
	}
}

func trailing(body []byte, i int) error {
	if skipSpace(body, i) != len(body) {
		return errNotObject
	}
	return nil
}

// memberName returns a quoted member name's text.
func memberName(raw []byte, esc bool) (string, bool) {
	if !esc && isPlainString(raw[1:len(raw)-1]) {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeValue decodes one JSON value: plain strings, numbers and literals
// directly, the rest with encoding/json.
func decodeValue(v []byte) (any, error) {
	switch v[0] {
	case '"':
		if bytes.IndexByte(v, '\\') < 0 && isPlainString(v[1:len(v)-1]) {
			return string(v[1 : len(v)-1]), nil
		}
	case 't':
		if string(v) == "true" {
			return true, nil
		}
	case 'f':
		if string(v) == "false" {
			return false, nil
		}
	case 'n':
		if string(v) == "null" {
			return nil, nil
		}
	default:
		if isNumber(v) {
			return json.Number(v), nil
		}
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// isPlainString reports whether s (between quotes, no escapes) is valid
// UTF-8 without control characters, so encoding/json would give it as is.
func isPlainString(s []byte) bool {
	for _, c := range s {
		if c < 0x20 {
			return false
		}
	}
	return utf8.Valid(s)
}

// isNumber reports whether v is a JSON number.
func isNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && v[i] >= '1' && v[i] <= '9':
		i = digits(v, i)
	default:
		return false
	}
	if i < len(v) && v[i] == '.' {
		j := digits(v, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := digits(v, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(v)
}

func digits(v []byte, i int) int {
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote), -1 when unterminated, and whether it has escapes.
func skipString(b []byte, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1, esc
		}
		seg := b[j : j+k]
		if bytes.IndexByte(seg, '\\') < 0 {
			return j + k + 1, esc
		}
		esc = true
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for n < len(seg) && seg[len(seg)-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + k + 1, esc
		}
		j += k + 1
	}
	return -1, esc
}

// skipValue returns the index after the JSON value starting at b[i], -1
// when it is cut short. Scalars are delimited, not validated: the values
// kept are decoded, and bodies the store holds are valid JSON.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			if j == i {
				return -1
			}
			return j
		}
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// DecodeDoc decodes a stored document body as selectors and indexes see
// it, with _id and _rev set: only the members names lists (see
// DecodeMembers), or the whole body when names is nil or the fast path
// refuses the body (so encoding/json gives the error).
func DecodeDoc(id, rev string, body []byte, names map[string]bool) (map[string]any, error) {
	var m map[string]any
	if names != nil {
		if mm, err := DecodeMembers(body, names); err == nil {
			m = mm
		}
	}
	if m == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]any{}
		}
	}
	m["_id"], m["_rev"] = id, rev
	return m, nil
}
