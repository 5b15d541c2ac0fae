package couchdoc

import (
	"bytes"
	"encoding/json"
)

// maxNestingDepth is encoding/json's bound on nested arrays and objects.
const maxNestingDepth = 10000

// validJSON reports whether data is one valid JSON value, exactly as
// json.Valid does (strings are not checked for valid UTF-8, nesting stops
// at 10,000 levels), several times faster: it is ParseDoc's only full check
// of a document's syntax.
func validJSON(data []byte) bool {
	var arr [64]byte
	stack := arr[:0] // '{' or '[' of each open container
	i := skipSpace(data, 0)
	for {
		// A value starts at i.
		if i >= len(data) {
			return false
		}
		ok := true
		switch c := data[i]; {
		case c == '{' || c == '[':
			stack = append(stack, c)
			if len(stack) > maxNestingDepth {
				return false
			}
			i = skipSpace(data, i+1)
			if i < len(data) && data[i] == c+2 { // '}' or ']'
				stack = stack[:len(stack)-1]
				i++
				break
			}
			if c == '{' {
				if i, ok = validKey(data, i); !ok {
					return false
				}
			}
			continue
		case c == '"':
			i, ok = validString(data, i)
		case c == '-' || '0' <= c && c <= '9':
			i, ok = validNumber(data, i)
		case c == 't':
			i, ok = validLiteral(data, i, "true")
		case c == 'f':
			i, ok = validLiteral(data, i, "false")
		case c == 'n':
			i, ok = validLiteral(data, i, "null")
		default:
			return false
		}
		if !ok {
			return false
		}
		// After a value: close containers, or move to the next element.
		for {
			i = skipSpace(data, i)
			if len(stack) == 0 {
				return i == len(data)
			}
			if i >= len(data) {
				return false
			}
			top := stack[len(stack)-1]
			if data[i] == top+2 {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return false
			}
			i = skipSpace(data, i+1)
			if top == '{' {
				if i, ok = validKey(data, i); !ok {
					return false
				}
			}
			break
		}
	}
}

// validKey checks a key and its colon at i and returns where its value
// starts.
func validKey(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return i, false
	}
	i, ok := validString(data, i)
	if !ok {
		return i, false
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return i, false
	}
	return skipSpace(data, i+1), true
}

// validString checks the string starting at data[i] and returns the index
// after it.
func validString(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); {
		c := data[j]
		if c >= 0x20 && c != '"' && c != '\\' {
			j++
			continue
		}
		switch c {
		case '"':
			return j + 1, true
		case '\\':
			if j+1 >= len(data) {
				return j, false
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(data) {
					return j, false
				}
				for _, h := range data[j+2 : j+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return j, false
					}
				}
				j += 6
			default:
				return j, false
			}
		default: // a control character
			return j, false
		}
	}
	return len(data), false
}

// validNumber checks the number starting at data[i] (JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) and returns the index
// after it.
func validNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	digits := func() bool {
		s := i
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
		return i > s
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

// validLiteral checks that lit starts at data[i].
func validLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// CompactBody checks that body is one JSON object and returns it without
// insignificant space (nil or empty is {}). It is the one JSON validator
// of stored bodies: the same check ParseDoc makes, so the store accepts
// exactly what the parser does. A body that is not valid JSON or not an
// object is ErrBadRequest. A compact body is returned as is, not copied.
func CompactBody(body []byte) ([]byte, error) {
	// JSON's white space only: bytes.TrimSpace also drops \f, \v and
	// Unicode spaces, and "\f{}" is not JSON.
	b := bytes.Trim(body, " \t\n\r")
	if len(b) == 0 {
		return []byte("{}"), nil
	}
	if b[0] != '{' {
		return nil, Errorf(ErrBadRequest, "Document must be a JSON object")
	}
	if !validJSON(b) {
		return nil, Errorf(ErrBadRequest, "invalid JSON body")
	}
	if _, space := valueEnd(b, 0); !space {
		return b, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(b))
	if err := json.Compact(&buf, b); err != nil {
		return nil, Errorf(ErrBadRequest, "invalid JSON body: %v", err)
	}
	return buf.Bytes(), nil
}
