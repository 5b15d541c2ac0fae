package couchdoc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// A small scanner over JSON that json.Valid has already accepted: it only
// finds where members and values start and end, so it never re-checks the
// grammar. ParseDoc uses it to read a document in one pass.

// jsonSpace reports whether c is insignificant white space in JSON.
func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) && jsonSpace(data[i]) {
		i++
	}
	return i
}

// stringEnd returns the index just after the string starting at data[i]
// (an opening quote).
func stringEnd(data []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			return len(data) // not reached on valid JSON
		}
		j += k
		// The quote is escaped when an odd number of backslashes precede it.
		n := 0
		for b := j - 1; b > i && data[b] == '\\'; b-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}

// valueEnd returns the index just after the value starting at data[i], and
// whether the value holds insignificant space (then it is not compact).
func valueEnd(data []byte, i int) (end int, space bool) {
	switch data[i] {
	case '"':
		return stringEnd(data, i), false
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				j = stringEnd(data, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, space
				}
			case ' ', '\t', '\n', '\r':
				space = true
			}
		}
		return len(data), space
	}
	j := i + 1
	for j < len(data) {
		switch data[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j, false
		}
		j++
	}
	return j, false
}

// member is one member of an object: its key's raw string (quotes
// included) and its raw value.
type member struct {
	key, value []byte
	space      bool // value holds insignificant space
}

// nextMember reads the member at or after i in an object (i is past the
// '{' or a previous member). ok is false at the closing brace; next is
// where to continue.
func nextMember(data []byte, i int) (m member, next int, ok bool) {
	i = skipSpace(data, i)
	if data[i] == ',' {
		i = skipSpace(data, i+1)
	}
	if data[i] == '}' {
		return m, i + 1, false
	}
	ke := stringEnd(data, i)
	m.key = data[i:ke]
	i = skipSpace(data, ke)
	i = skipSpace(data, i+1) // the colon
	ve, space := valueEnd(data, i)
	m.value, m.space = data[i:ve], space
	return m, ve, true
}

// EachMember calls fn with the key (a JSON string, quotes included) and
// the value of each top-level member of the JSON object data, in order,
// until fn returns false. It is meant for JSON that json.Valid accepts (a
// body Settee parsed) and does not check the grammar, but other bytes end
// it with ok false (or a member that is not JSON), never a panic; ok is
// false too when data is not an object.
func EachMember(data []byte, fn func(key, value []byte) bool) (ok bool) {
	ok, _ = eachItem(data, '{', '}', func(i int) (int, bool) {
		if data[i] != '"' {
			return 0, false
		}
		ke := stringEnd(data, i)
		key := data[i:ke]
		if i = skipSpace(data, ke); i == len(data) || data[i] != ':' {
			return 0, false
		}
		if i = skipSpace(data, i+1); i == len(data) {
			return 0, false
		}
		ve, _ := valueEnd(data, i)
		return ve, fn(key, data[i:ve])
	})
	return ok
}

// EachElement calls fn with each element of the JSON array data, in
// order; ok is false when fn returns false, when data is not an array, or
// (as with EachMember) when it is not JSON.
func EachElement(data []byte, fn func(value []byte) bool) (ok bool) {
	ok, stopped := eachItem(data, '[', ']', func(i int) (int, bool) {
		ve, _ := valueEnd(data, i)
		return ve, fn(data[i:ve])
	})
	return ok && !stopped
}

// eachItem walks the items of the object or array (open, close) data,
// item reading the one at i and answering where it ends and whether to go
// on; ok is false when data is not such a value or ends short, stopped
// true when item said to stop.
func eachItem(data []byte, open, close byte, item func(i int) (end int, more bool)) (ok, stopped bool) {
	i := skipSpace(data, 0)
	if i == len(data) || data[i] != open {
		return false, false
	}
	i = skipSpace(data, i+1)
	for first := true; ; first = false {
		if i == len(data) {
			return false, false
		}
		if data[i] == close {
			return true, false
		}
		if !first {
			if data[i] != ',' {
				return false, false
			}
			if i = skipSpace(data, i+1); i == len(data) {
				return false, false
			}
		}
		end, more := item(i)
		if !more {
			return end > 0, true
		}
		i = skipSpace(data, end)
	}
}

// plainString returns the contents of the raw JSON string s when they need
// no decoding: no escapes and valid UTF-8 (json.Unmarshal would replace
// invalid bytes).
func plainString(s []byte) ([]byte, bool) {
	if len(s) < 2 || s[0] != '"' {
		return nil, false
	}
	c := s[1 : len(s)-1]
	high := false
	for _, b := range c {
		if b == '\\' {
			return nil, false
		}
		if b >= utf8.RuneSelf {
			high = true
		}
	}
	if high && !utf8.Valid(c) {
		return nil, false
	}
	return c, true
}

// decodeString decodes the raw JSON string s.
func decodeString(s []byte) string {
	if c, ok := plainString(s); ok {
		return string(c)
	}
	var v string
	json.Unmarshal(s, &v) //nolint:errcheck // s is a valid JSON string
	return v
}

// appendKey appends the key's raw string as json.Marshal writes its decoded
// value (which the body has always held): the raw bytes when they need no
// change, else decoded and re-encoded.
func appendKey(dst, raw []byte) []byte {
	if c, ok := plainString(raw); ok && marshalsAsIs(c) {
		return append(dst, raw...)
	}
	b, _ := json.Marshal(decodeString(raw))
	return append(dst, b...)
}

// marshalsAsIs reports whether json.Marshal writes the plain string c
// unchanged: it escapes <, >, &, U+2028 and U+2029 (control characters
// cannot appear unescaped in valid JSON).
func marshalsAsIs(c []byte) bool {
	for i, b := range c {
		switch {
		case b == '<' || b == '>' || b == '&':
			return false
		case b == 0xE2 && i+2 < len(c) && c[i+1] == 0x80 && c[i+2]&^1 == 0xA8:
			return false
		}
	}
	return true
}

// appendCompactValue appends the valid JSON value v without insignificant
// space, as json.Compact does.
func appendCompactValue(dst, v []byte) []byte {
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == '"':
			e := stringEnd(v, i)
			dst = append(dst, v[i:e]...)
			i = e
		case jsonSpace(c):
			i++
		default:
			dst = append(dst, c)
			i++
		}
	}
	return dst
}

// plainInt parses the raw JSON number v as json.Unmarshal does into an
// integer of bitSize bits; ok is false for anything it does not take
// (fractions, exponents, overflow).
func plainInt(v []byte, bitSize int) (int64, bool) {
	for _, c := range v {
		if (c < '0' || c > '9') && c != '-' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, bitSize)
	return n, err == nil
}
