package mango

import (
	"encoding/binary"
	"math"
)

// Key type tags, in collation order; 0x00 ends an array or object.
const (
	tagEnd    = 0x00
	tagNull   = 0x01
	tagFalse  = 0x02
	tagTrue   = 0x03
	tagNumber = 0x04
	tagString = 0x05
	tagArray  = 0x06
	tagObject = 0x07
	tagMember = 0x01 // starts each object member
)

// KeyMax is greater than every encoded key and than any key followed by
// more bytes: append it to a key prefix to bound the range of keys that
// start with that prefix.
const KeyMax = 0xFF

// EncodeKey appends a memcomparable encoding of a JSON value to dst: for
// any two values, bytes.Compare of their encodings has the sign of
// Compare. Each encoding is self-delimiting, so encodings of value
// sequences compare like arrays of those values, and no encoding is a
// prefix of another's in a way that matters for ordering.
//
//	null 01, false 02, true 03
//	number 04 + 8 bytes: the float64's bits, sign bit flipped for positives
//	        and every bit flipped for negatives (-0 is encoded as 0)
//	string 05 + the collation key of icu.go
//	array  06 + each element's encoding + 00
//	object 07 + per member (keys sorted by bytes): 01, the key's bytes
//	        (00 escaped as 00 FF) and 00 01, the value's encoding; then 00
//
// Numbers are compared as float64, as Compare does; values of other Go
// types encode as null.
func EncodeKey(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, tagNull)
	case bool:
		if x {
			return append(dst, tagTrue)
		}
		return append(dst, tagFalse)
	case string:
		return appendStringKey(append(dst, tagString), x)
	case []any:
		dst = append(dst, tagArray)
		for _, e := range x {
			dst = EncodeKey(dst, e)
		}
		return append(dst, tagEnd)
	case map[string]any:
		dst = append(dst, tagObject)
		for _, k := range sortedKeys(x) {
			dst = append(dst, tagMember)
			dst = appendRawString(dst, k)
			dst = EncodeKey(dst, x[k])
		}
		return append(dst, tagEnd)
	}
	if f, ok := toFloat(v); ok {
		if f == 0 {
			f = 0 // -0 collates as 0
		}
		bits := math.Float64bits(f)
		if bits&(1<<63) != 0 {
			bits = ^bits
		} else {
			bits |= 1 << 63
		}
		return binary.BigEndian.AppendUint64(append(dst, tagNumber), bits)
	}
	return append(dst, tagNull)
}

// appendRawString appends s's bytes in byte order: 00 becomes 00 FF and
// the string ends with 00 01.
func appendRawString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xFF)
			continue
		}
		dst = append(dst, s[i])
	}
	return append(dst, 0, 1)
}
