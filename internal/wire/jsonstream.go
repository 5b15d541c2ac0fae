package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// jsonStream reads the envelope of a JSON answer (objects, arrays, keys)
// and hands out whole values as raw bytes, finding where a value ends by
// tracking only strings, escapes and nesting. It does not validate the
// values it hands out: their readers do (couchdoc.ParseDoc, json.Unmarshal),
// so each document's bytes are checked once instead of once per layer.
type jsonStream struct {
	r        io.Reader
	buf      []byte
	pos, end int
	err      error // the read error once buf is drained
	key      []byte
}

func newJSONStream(r io.Reader) *jsonStream {
	return &jsonStream{r: r, buf: make([]byte, 32<<10)}
}

// fill reads more input; it reports false when there is none (s.err).
func (s *jsonStream) fill() bool {
	if s.err != nil {
		return false
	}
	if s.pos > 0 {
		s.end = copy(s.buf, s.buf[s.pos:s.end])
		s.pos = 0
	}
	if s.end == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
		}
		if n > 0 || err != nil {
			return n > 0
		}
	}
}

// failure is the error for input that ended (or failed) early.
func (s *jsonStream) failure() error {
	if s.err == nil || s.err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

// peek returns the next byte that is not white space, without consuming it.
func (s *jsonStream) peek() (byte, error) {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if !s.fill() {
			return 0, s.failure()
		}
	}
}

// expect consumes the delimiter d (after white space) where a value may
// stand.
func (s *jsonStream) expect(what string, d byte) error {
	c, err := s.peek()
	if err != nil {
		return readErr(what, err)
	}
	if c != d {
		// Another value: a cut-off one is an early end, as a json.Decoder
		// reading its token would say.
		if c != ',' && c != ':' && c != '}' && c != ']' && c != '{' && c != '[' {
			raw, err := s.readValue(what, s.key[:0])
			s.key = raw
			if err != nil {
				return err
			}
		}
		return malformedf(what, "expected %q, got %q", d, c)
	}
	s.pos++
	return nil
}

// more reports whether another element or member follows in the array or
// object being read (closed by end), consuming the comma before it unless
// first. At the end it consumes the closing delimiter.
func (s *jsonStream) more(what string, end byte, first bool) (bool, error) {
	c, err := s.peek()
	if err != nil {
		return false, readErr(what, err)
	}
	switch {
	case c == end:
		s.pos++
		return false, nil
	case first:
		return true, nil
	case c == ',':
		s.pos++
		return true, nil
	}
	return false, malformedf(what, "expected ',' or %q, got %q", end, c)
}

// readKey reads an object key and its colon. The key's bytes are valid
// until the next call.
func (s *jsonStream) readKey(what string) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, readErr(what, err)
	}
	if c != '"' {
		return nil, malformedf(what, "expected a key, got %q", c)
	}
	raw, err := s.readValue(what, s.key[:0])
	if err != nil {
		return nil, err
	}
	s.key = raw
	key := raw[1 : len(raw)-1]
	for _, b := range key {
		if b == '\\' || b < 0x20 {
			var k string
			if err := json.Unmarshal(raw, &k); err != nil {
				return nil, malformed(what, err)
			}
			key = []byte(k)
			break
		}
	}
	c, err = s.peek()
	if err != nil {
		return nil, readErr(what, err)
	}
	if c != ':' {
		return nil, malformedf(what, "expected ':' after a key, got %q", c)
	}
	s.pos++
	return key, nil
}

// skipValue reads past the next value, checking that it is valid JSON.
func (s *jsonStream) skipValue(what string) error {
	raw, err := s.readValue(what, s.key[:0])
	if err != nil {
		return err
	}
	s.key = raw
	if !json.Valid(raw) {
		return malformedf(what, "invalid JSON value")
	}
	return nil
}

// readValue appends the next value's raw bytes to dst.
func (s *jsonStream) readValue(what string, dst []byte) ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return dst, readErr(what, err)
	}
	switch c {
	case ',', ':', '}', ']':
		return dst, malformedf(what, "expected a value, got %q", c)
	}
	scalar := c != '{' && c != '[' && c != '"'
	start := len(dst)
	depth, inString, escaped := 0, false, false
	for {
		chunk := s.buf[s.pos:s.end]
		q := -1 // the next quote in chunk, once looked for
		for i := 0; i < len(chunk); i++ {
			b := chunk[i]
			if inString {
				if !escaped && b != '"' && b != '\\' {
					// Jump to the next quote or backslash (long strings such
					// as inline attachments' base64). q caches the next
					// quote, so a string full of escapes stays linear.
					if q < i {
						q = i + indexOrLen(chunk[i:], '"')
					}
					k := indexOrLen(chunk[i:q], '\\')
					i += k - 1
					continue
				}
				switch {
				case escaped:
					escaped = false
				case b == '\\':
					escaped = true
				case b == '"':
					inString = false
					if depth == 0 {
						s.pos += i + 1
						return append(dst, chunk[:i+1]...), nil
					}
				}
				continue
			}
			if scalar {
				// Numbers and literals are made of these; anything else ends them.
				if !('0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || b == '-' || b == '+' || b == '.') {
					s.pos += i
					return append(dst, chunk[:i]...), nil
				}
				continue
			}
			switch b {
			case '"':
				inString = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.pos += i + 1
					return append(dst, chunk[:i+1]...), nil
				}
			}
		}
		dst = append(dst, chunk...)
		s.pos = s.end
		if !s.fill() {
			if scalar && s.err == io.EOF && json.Valid(dst[start:]) {
				return dst, nil // a number ending the input
			}
			if err := syntaxError(dst[start:]); err != nil {
				return dst, malformed(what, err)
			}
			return dst, readErr(what, s.failure())
		}
	}
}

// syntaxError returns the syntax error in the beginning of a value that
// the input cut short, if it has one: then the answer is malformed, not
// merely cut off.
func syntaxError(partial []byte) error {
	var raw json.RawMessage
	err := json.NewDecoder(bytes.NewReader(partial)).Decode(&raw)
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return err
	}
	return nil
}

// indexOrLen is bytes.IndexByte, with len(b) for not found.
func indexOrLen(b []byte, c byte) int {
	if k := bytes.IndexByte(b, c); k >= 0 {
		return k
	}
	return len(b)
}
