package couchdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"unicode/utf8"
)

// CanonicalBody returns body re-encoded with sorted keys at every level and
// no insignificant space, the form hashed into new revision ids: what
// encoding/json gives for the body decoded into a map with UseNumber (the
// last of duplicate keys wins, numbers keep their text, strings are
// re-escaped without HTML escaping). Revision ids depend on every byte, so
// canonicalFast, which handles the common bodies without building maps
// (the map round trip was half of a local write's CPU), gives way to that
// reference for anything it does not handle exactly: escapes or non-ASCII
// in keys, \u escapes, invalid UTF-8, deep nesting, syntax errors (whose
// messages are the reference's). FuzzCanonicalBody checks that both agree.
func CanonicalBody(body json.RawMessage) ([]byte, error) {
	if out, ok := canonicalFast(body); ok {
		return out, nil
	}
	return canonicalSlow(body)
}

// canonicalSlow is the reference: a round trip through encoding/json.
func canonicalSlow(body json.RawMessage) ([]byte, error) {
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

// canonicalMaxDepth bounds canonicalFast's recursion; deeper bodies go to
// the reference, which refuses them past encoding/json's own limit.
const canonicalMaxDepth = 500

// canonicalFast canonicalizes a body that is one JSON object followed by
// nothing but space, or reports false.
func canonicalFast(body []byte) ([]byte, bool) {
	c := canonicalizers.Get().(*canonicalizer)
	c.src, c.i = body, 0
	defer c.release()
	c.skipSpace()
	if c.i == len(body) {
		return []byte("{}"), true
	}
	if body[c.i] != '{' {
		return nil, false
	}
	out, ok := c.value(make([]byte, 0, len(body)), 0)
	if !ok {
		return nil, false
	}
	c.skipSpace()
	return out, c.i == len(body)
}

// canonicalizers keeps canonicalizers and their scratch between bodies.
var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

// release returns c to the pool, less scratch grown past 64 KB by a large
// body, which the pool would otherwise keep.
func (c *canonicalizer) release() {
	c.src = nil
	for d := range c.vals {
		if cap(c.vals[d]) > 64<<10 {
			c.vals[d] = nil
		}
		if cap(c.mems[d]) > 1024 {
			c.mems[d] = nil
		}
	}
	canonicalizers.Put(c)
}

type canonicalizer struct {
	src []byte
	i   int
	// vals and mems are object's scratch, one per depth, reused by the
	// objects met at that depth.
	vals [][]byte
	mems [][]canonMember
}

func (c *canonicalizer) skipSpace() {
	for c.i < len(c.src) {
		switch c.src[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at c.i.
func (c *canonicalizer) value(dst []byte, depth int) ([]byte, bool) {
	if depth > canonicalMaxDepth {
		return nil, false
	}
	c.skipSpace()
	if c.i >= len(c.src) {
		return nil, false
	}
	switch b := c.src[c.i]; {
	case b == '{':
		return c.object(dst, depth)
	case b == '[':
		c.i++
		dst = append(dst, '[')
		c.skipSpace()
		if c.i < len(c.src) && c.src[c.i] == ']' {
			c.i++
			return append(dst, ']'), true
		}
		for {
			var ok bool
			if dst, ok = c.value(dst, depth+1); !ok {
				return nil, false
			}
			c.skipSpace()
			if c.i >= len(c.src) {
				return nil, false
			}
			switch c.src[c.i] {
			case ',':
				c.i++
				dst = append(dst, ',')
			case ']':
				c.i++
				return append(dst, ']'), true
			default:
				return nil, false
			}
		}
	case b == '"':
		return c.str(dst)
	case b == 't':
		return c.literal(dst, "true")
	case b == 'f':
		return c.literal(dst, "false")
	case b == 'n':
		return c.literal(dst, "null")
	default:
		return c.number(dst)
	}
}

func (c *canonicalizer) literal(dst []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(c.src[c.i:], []byte(lit)) {
		return nil, false
	}
	c.i += len(lit)
	return append(dst, lit...), true
}

// number copies a number's text (encoding/json keeps a json.Number's
// text) after checking JSON's grammar.
func (c *canonicalizer) number(dst []byte) ([]byte, bool) {
	end, ok := validNumber(c.src, c.i)
	if !ok {
		return nil, false
	}
	dst = append(dst, c.src[c.i:end]...)
	c.i = end
	return dst, true
}

// str appends a string as encoding/json writes it (HTML not escaped). It
// decodes the escapes \" \\ \/ \b \f \n \r \t and leaves \u escapes and
// invalid UTF-8 to the reference.
func (c *canonicalizer) str(dst []byte) ([]byte, bool) {
	s := c.src
	i := c.i + 1
	dst = append(dst, '"')
	for i < len(s) {
		// A run of bytes written as they are goes in one append.
		j := i
		for j < len(s) && plainByte[s[j]] {
			j++
		}
		dst = append(dst, s[i:j]...)
		if i = j; i >= len(s) {
			break
		}
		b := s[i]
		switch {
		case b == '"':
			c.i = i + 1
			return append(dst, '"'), true
		case b < 0x20:
			return nil, false // raw control characters are a syntax error
		case b == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			switch s[i+1] {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '/':
				dst = append(dst, '/')
			case 'b':
				dst = append(dst, '\\', 'b')
			case 'f':
				dst = append(dst, '\\', 'f')
			case 'n':
				dst = append(dst, '\\', 'n')
			case 'r':
				dst = append(dst, '\\', 'r')
			case 't':
				dst = append(dst, '\\', 't')
			default:
				return nil, false
			}
			i += 2
		case b < utf8.RuneSelf:
			dst = append(dst, b)
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			if r == '\u2028' || r == '\u2029' {
				// encoding/json escapes these for JavaScript.
				dst = append(dst, `\u202`...)
				dst = append(dst, "89"[r-'\u2028'])
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
		}
	}
	return nil, false
}

// canonMember is an object member in canonicalizer.object's scratch: its key
// (as in the source: keys with escapes go to the reference) and its
// value's canonical form.
type canonMember struct {
	key        []byte
	start, end int
}

// object appends an object with its members sorted by key (byte order, as
// encoding/json sorts a map's keys), the last of duplicate keys kept.
func (c *canonicalizer) object(dst []byte, depth int) ([]byte, bool) {
	c.i++ // '{'
	for len(c.vals) <= depth {
		c.vals, c.mems = append(c.vals, nil), append(c.mems, nil)
	}
	members, vals := c.mems[depth][:0], c.vals[depth][:0]
	c.skipSpace()
	if c.i < len(c.src) && c.src[c.i] == '}' {
		c.i++
		return append(dst, '{', '}'), true
	}
	sorted := true
	for {
		c.skipSpace()
		if c.i >= len(c.src) || c.src[c.i] != '"' {
			return nil, false
		}
		start := c.i + 1
		end := bytes.IndexByte(c.src[start:], '"')
		if end < 0 {
			return nil, false
		}
		key := c.src[start : start+end]
		if !IsPlainString(key) {
			return nil, false // escapes or non-ASCII keys: the reference
		}
		c.i = start + end + 1
		c.skipSpace()
		if c.i >= len(c.src) || c.src[c.i] != ':' {
			return nil, false
		}
		c.i++
		vs := len(vals)
		var ok bool
		if vals, ok = c.value(vals, depth+1); !ok {
			return nil, false
		}
		if n := len(members); n > 0 && bytes.Compare(members[n-1].key, key) >= 0 {
			sorted = false
		}
		members = append(members, canonMember{key: key, start: vs, end: len(vals)})
		c.skipSpace()
		if c.i >= len(c.src) {
			return nil, false
		}
		if c.src[c.i] == '}' {
			c.i++
			break
		}
		if c.src[c.i] != ',' {
			return nil, false
		}
		c.i++
	}
	if !sorted {
		// Of equal keys the one met last (its value later in vals) stays
		// last, and wins.
		slices.SortFunc(members, func(a, b canonMember) int {
			if c := bytes.Compare(a.key, b.key); c != 0 {
				return c
			}
			return a.start - b.start
		})
	}
	c.mems[depth], c.vals[depth] = members, vals // grown: kept for the next
	dst = append(dst, '{')
	first := true
	for k, m := range members {
		if k+1 < len(members) && bytes.Equal(members[k+1].key, m.key) {
			continue // a later duplicate wins
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, m.key...)
		dst = append(dst, '"', ':')
		dst = append(dst, vals[m.start:m.end]...)
	}
	return append(dst, '}'), true
}
