package couchdoc

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// errInvalidRev is CouchDB's answer to a revision id couch_doc:parse_rev
// refuses.
func errInvalidRev() error { return Errorf(ErrBadRequest, "Invalid rev format") }

// ParseRev splits a revision id into its generation and id the way CouchDB
// 3.5's couch_doc:parse_rev does: the generation is the text before the
// first '-' (decimal digits, an optional leading '+', leading zeros
// allowed; 0 is accepted), the id everything after it: any bytes, possibly
// none. An id of exactly 32 bytes must be a hexadecimal number, which
// CouchDB keeps as its 16 bytes. The hash returned is the id as CouchDB
// answers it afterwards (see CanonRevID), so FormatRev(gen, hash) is the
// canonical form of rev. Anything else, and a generation beyond int, is
// ErrBadRequest "Invalid rev format".
func ParseRev(rev string) (gen int, hash string, err error) {
	i := strings.IndexByte(rev, '-')
	if i < 0 {
		return 0, "", errInvalidRev()
	}
	gen, ok := parseGen(rev[:i])
	if !ok {
		return 0, "", errInvalidRev()
	}
	hash, ok = CanonRevID(rev[i+1:])
	if !ok {
		return 0, "", errInvalidRev()
	}
	return gen, hash, nil
}

// CanonRev returns rev in the form CouchDB answers it: the generation
// without sign or leading zeros and the id as CanonRevID gives it. An
// already canonical rev (every rev CouchDB or Settee makes) is returned
// as is, without allocating.
func CanonRev(rev string) (string, error) {
	gen, hash, err := ParseRev(rev)
	if err != nil {
		return "", err
	}
	if i := strings.IndexByte(rev, '-'); rev[i+1:] == hash && rev[0] != '+' && (rev[0] != '0' || i == 1) {
		return rev, nil
	}
	return FormatRev(gen, hash), nil
}

// parseGen reads a generation as Erlang's list_to_integer/1 does: an
// optional sign then at least one decimal digit ('-' cannot occur: the
// generation ends at the first one).
func parseGen(s string) (int, bool) {
	if s != "" && s[0] == '+' {
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 0)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// CanonRevID returns a revision id (the part after "N-") in the form
// CouchDB 3.5 stores and answers it: couch_doc:parse_revid turns an id of
// 32 bytes into the 16-byte integer it spells in hexadecimal (an optional
// sign, then hex digits of either case; a negative one in two's
// complement) and keeps any other id as its bytes; couch_doc:revid_to_str
// then prints every 16-byte id as 32 lower-case hex digits. So a
// canonical id of 32 bytes is lower-case hex, one of 16 bytes never
// occurs, and 16 bytes in and their 32-digit hex are the same revision.
// ok is false for a 32-byte id that is not a hexadecimal number.
func CanonRevID(id string) (canon string, ok bool) {
	switch len(id) {
	case 32:
		if isLowerHex(id) {
			return id, true
		}
		b, ok := hexInt128(id)
		if !ok {
			return "", false
		}
		return hex.EncodeToString(b[:]), true
	case 16:
		return hex.EncodeToString([]byte(id)), true
	}
	return id, true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// hexInt128 is <<(list_to_integer(S, 16)):128>> for a 32-byte S: an
// optional sign, then hex digits; the value modulo 2^128, big-endian.
func hexInt128(s string) (b [16]byte, ok bool) {
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg, s = true, s[1:]
	}
	var hi, lo uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return b, false
		}
		hi = hi<<4 | lo>>60
		lo = lo<<4 | uint64(d)
	}
	if neg { // two's complement: invert and add one
		hi, lo = ^hi, ^lo
		lo++
		if lo == 0 {
			hi++
		}
	}
	for i := 0; i < 8; i++ {
		b[i] = byte(hi >> (56 - 8*i))
		b[8+i] = byte(lo >> (56 - 8*i))
	}
	return b, true
}

// CompareRevIDs orders two canonical revision ids as CouchDB orders them
// (Erlang's order of the binaries it keeps): a 32-digit id by its 16
// bytes, any other by its own bytes, byte by byte, a prefix first. It
// returns -1, 0 or +1.
func CompareRevIDs(a, b string) int {
	if (len(a) == 32) == (len(b) == 32) {
		// Both hex of one length (hex order is byte order), or both raw.
		return strings.Compare(a, b)
	}
	if len(a) == 32 {
		return compareHexRaw(a, b)
	}
	return -compareHexRaw(b, a)
}

// compareHexRaw compares the bytes the canonical 32-digit id h spells with
// the raw id r.
func compareHexRaw(h, r string) int {
	var hb [16]byte
	hex.Decode(hb[:], []byte(h))
	return strings.Compare(string(hb[:]), r)
}
