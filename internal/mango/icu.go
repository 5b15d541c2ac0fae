package mango

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// CouchDB compares strings with ICU's root collation (the Unicode Collation
// Algorithm with CLDR's root order). We approximate it with small tables:
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
//   - Latin letters with one diacritic (and ø, đ, ł, ħ) sort with their
//     base letter, the diacritic deciding at the secondary level ("e" < "E"
//     < "é" < "f"); ß, æ and œ sort as ss, ae and oe, just after them.
//   - Other characters sort after all ASCII, by code point. ICU sorts
//     scripts in their own order; we do not.
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

// mark is the key byte before a non-ASCII rune's code point.
func mark(r rune) byte {
	if unicode.IsSymbol(r) || unicode.IsPunct(r) {
		return symbolMark
	}
	return otherMark
}

// collateStrings compares two strings with the approximation above: by
// their keys, then by bytes (equal keys for distinct strings come only
// from invalid UTF-8).
func collateStrings(a, b string) int {
	if a == b {
		return 0
	}
	var bufA, bufB [96]byte
	if c := bytes.Compare(appendStringKey(bufA[:0], a), appendStringKey(bufB[:0], b)); c != 0 {
		return c
	}
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

// appendStringKey appends a string's sort key, ICU's three levels:
// primary weights (one byte for ASCII and for each letter of a folded Latin
// letter, a mark byte and three bytes of code point for other runes), 00,
// secondary weights (diacritics, one byte per primary unit; none when the
// string has no diacritic), 00, tertiary weights (case; none when all are
// 1), 00. Byte order of keys is collateStrings's order; invalid UTF-8 keys
// as U+FFFD.
func appendStringKey(dst []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c >= 'A' && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain { // lowercase ASCII: primary weights only
		for i := 0; i < len(s); i++ {
			dst = append(dst, primary[s[i]])
		}
		return append(dst, 0, 0, 0)
	}
	for i := 0; i < len(s); {
		r, n := decodeRune(s, i)
		i += n
		switch {
		case r < utf8.RuneSelf:
			dst = append(dst, primary[r])
		case latinFold[r].base != 0:
			dst = append(dst, primary[latinFold[r].base])
		case latinExpand[r] != "":
			for _, c := range []byte(latinExpand[r]) {
				dst = append(dst, primary[c])
			}
		default:
			dst = append(dst, mark(r), byte(r>>16), byte(r>>8), byte(r))
		}
	}
	dst = append(dst, 0)
	dst = appendLevel(dst, s, func(r rune) byte {
		if f := latinFold[r]; f.base != 0 {
			return f.sec
		}
		return 1
	})
	dst = append(dst, 0)
	dst = appendLevel(dst, s, func(r rune) byte {
		switch {
		case r >= 'A' && r <= 'Z':
			return 2
		case r == 'Æ' || r == 'Œ':
			return 4
		case latinExpand[r] != "":
			return 3
		case latinFold[r].base >= 'A' && latinFold[r].base <= 'Z':
			return 2
		}
		return 1
	})
	return append(dst, 0)
}

// appendLevel appends a secondary or tertiary level: weight(r) for each
// primary unit of s, or nothing when every weight is 1 (a sequence of 1s
// and nothing sort alike against any other sequence, which has a weight
// above 1).
func appendLevel(dst []byte, s string, weight func(rune) byte) []byte {
	start := len(dst)
	any := false
	for i := 0; i < len(s); {
		r, n := decodeRune(s, i)
		i += n
		w := weight(r)
		any = any || w != 1
		units := 1
		if e := latinExpand[r]; e != "" {
			units = len(e)
		}
		for k := 0; k < units; k++ {
			dst = append(dst, w)
		}
	}
	if !any {
		return dst[:start]
	}
	return dst
}
