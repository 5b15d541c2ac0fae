package localdb

// checkJSON reports whether b is exactly one valid JSON value (with
// optional surrounding space) and whether it has insignificant whitespace
// to compact away. It is a fast hand-written scanner: validating document
// bodies with encoding/json was the largest CPU cost of bulk writes.
func checkJSON(b []byte) (valid, hasSpace bool) {
	s := scanner{b: b}
	s.space()
	if !s.value(0) {
		return false, false
	}
	s.space()
	return s.i == len(b), s.ws
}

const maxJSONDepth = 10000

type scanner struct {
	b  []byte
	i  int
	ws bool
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.ws = true
			s.i++
		default:
			return
		}
	}
}

// next reads what follows a member or an element: close ends the
// container (end), a comma goes on, anything else is invalid (!ok).
func (s *scanner) next(close byte) (end, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case close:
		s.i++
		return true, true
	case ',':
		s.i++
		return false, true
	}
	return false, false
}

func (s *scanner) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxJSONDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return true
		}
		for {
			s.space()
			if s.i >= len(s.b) || s.b[s.i] != '"' || !s.str() {
				return false
			}
			s.space()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			if end, ok := s.next('}'); end || !ok {
				return ok
			}
		}
	case c == '[':
		s.i++
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			s.space()
			if !s.value(depth + 1) {
				return false
			}
			if end, ok := s.next(']'); end || !ok {
				return ok
			}
		}
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.num()
	}
	return false
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// plain marks the bytes that need no attention inside a string.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str scans a string starting at its opening quote.
func (s *scanner) str() bool {
	s.i++
	for s.i < len(s.b) {
		// Skip plain bytes in a tight loop; most of a body is string text.
		b, i := s.b, s.i
		for i+4 <= len(b) && plain[b[i]] && plain[b[i+1]] && plain[b[i+2]] && plain[b[i+3]] {
			i += 4
		}
		for i < len(b) && plain[b[i]] {
			i++
		}
		s.i = i
		if s.i >= len(s.b) {
			return false
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return false
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex(s.b[s.i+2]) || !isHex(s.b[s.i+3]) || !isHex(s.b[s.i+4]) || !isHex(s.b[s.i+5]) {
					return false
				}
				s.i += 6
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

func (s *scanner) num() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return false
	}
	if s.b[s.i] == '0' {
		s.i++
	} else if s.digits() == 0 {
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}
