package mango

import (
	"unicode"
	"unicode/utf8"
)

// CouchDB compares strings with ICU's root collation (the Unicode Collation
// Algorithm with CLDR's root order). We approximate it without tables:
//
//   - ASCII follows CLDR root order: control characters, whitespace,
//     punctuation and symbols (_ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # %
//     ` ^ + < = > | ~ $), digits, then letters with case ignored at first
//     ("a" < "B" < "c").
//   - Strings equal but for case compare letter by letter, lowercase first
//     ("a" < "A", "ab" < "aB" < "Ab"), ICU's tertiary level.
//   - Other symbols and punctuation (Unicode categories S and P: "☃",
//     "🚀", "∑", "«") sort after the ASCII ones and before digits, as in
//     ICU, by code point among themselves.
//   - Other characters sort after all ASCII, by code point. ICU would sort
//     "é" with "e" and scripts in their own order; we do not.
//   - Control characters are not ignored as ICU ignores them; every distinct
//     string has a distinct place, so equality is byte equality.
//
// Compare and EncodeKey use the same weights, so an index range and a
// selector agree on every string.

// asciiOrder lists the printable ASCII characters other than letters and
// digits in CLDR root order.
const asciiOrder = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"

// primary is the first-level weight of each ASCII character (1..127);
// tertiary is 2 for uppercase letters, else 1.
var primary, tertiary [128]byte

// symbolMark is the primary byte before the code point of a non-ASCII
// symbol or punctuation character: after ASCII symbols, before digits.
// otherMark, above every ASCII weight, precedes other non-ASCII characters.
var symbolMark byte

const otherMark = 0x80

func init() {
	w := byte(1)
	for c := 0; c < 32; c++ { // control characters first
		primary[c] = w
		w++
	}
	primary[127] = w
	w++
	for i := 0; i < len(asciiOrder); i++ {
		primary[asciiOrder[i]] = w
		w++
	}
	symbolMark = w
	w++
	for c := '0'; c <= '9'; c++ {
		primary[c] = w
		w++
	}
	for c := 'a'; c <= 'z'; c++ {
		primary[c] = w
		primary[c-'a'+'A'] = w
		w++
	}
	for c := range tertiary {
		tertiary[c] = 1
		if c >= 'A' && c <= 'Z' {
			tertiary[c] = 2
		}
	}
}

// weight returns a rune's primary weight: its first key byte, then its
// code point for non-ASCII runes (see appendStringKey).
func weight(r rune) uint32 {
	if r < utf8.RuneSelf {
		return uint32(primary[r]) << 24
	}
	return uint32(mark(r))<<24 | uint32(r)
}

// mark is the key byte before a non-ASCII rune's code point.
func mark(r rune) byte {
	if unicode.IsSymbol(r) || unicode.IsPunct(r) {
		return symbolMark
	}
	return otherMark
}

func tert(r rune) byte {
	if r < utf8.RuneSelf {
		return tertiary[r]
	}
	return 1
}

// collateStrings compares two strings with the approximation above.
func collateStrings(a, b string) int {
	if a == b {
		return 0
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := decodeRune(a, i)
		rb, nb := decodeRune(b, j)
		if wa, wb := weight(ra), weight(rb); wa != wb {
			if wa < wb {
				return -1
			}
			return 1
		}
		i, j = i+na, j+nb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	// Same primary weights, so the same number of runes.
	i, j = 0, 0
	for i < len(a) {
		ra, na := decodeRune(a, i)
		rb, nb := decodeRune(b, j)
		if ta, tb := tert(ra), tert(rb); ta != tb {
			return cmpInt(int(ta), int(tb))
		}
		i, j = i+na, j+nb
	}
	// Distinct strings with equal weights differ in invalid UTF-8 bytes.
	if a < b {
		return -1
	}
	return 1
}

func decodeRune(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// appendStringKey appends a string's sort key: its primary weights (one
// byte for ASCII, 0x80 and three bytes of code point for others), 0x00,
// one tertiary byte per rune (none when the string has no uppercase
// letter), 0x00. Byte order of keys is collateStrings's
// order, except for invalid UTF-8, which keys as U+FFFD.
func appendStringKey(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, n := decodeRune(s, i)
		if r < utf8.RuneSelf {
			dst = append(dst, primary[r])
		} else {
			dst = append(dst, mark(r), byte(r>>16), byte(r>>8), byte(r))
		}
		i += n
	}
	dst = append(dst, 0)
	upper := false
	for i := 0; i < len(s) && !upper; i++ {
		upper = s[i] >= 'A' && s[i] <= 'Z'
	}
	if !upper {
		// All tertiary weights are 1: leaving them out keeps the order,
		// since the 00 that follows sorts below any sequence of them.
		return append(dst, 0)
	}
	for i := 0; i < len(s); {
		r, n := decodeRune(s, i)
		dst = append(dst, tert(r))
		i += n
	}
	return append(dst, 0)
}
