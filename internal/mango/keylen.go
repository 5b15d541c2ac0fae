package mango

// KeyLen returns the length of the EncodeKey encoding b starts with, and
// false when b does not start with a whole encoding. Index entries append
// a document id to their fields' encodings; KeyLen finds where it starts
// without a copy of the id beside the key.
func KeyLen(b []byte) (int, bool) { return keyLen(b, rawStringLen) }

// keyLen measures an encoding whose object member names are measured by
// nameLen (raw strings in EncodeKey's, whole string keys in
// EncodeViewKey's).
func keyLen(b []byte, nameLen func([]byte) (int, bool)) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	switch b[0] {
	case tagNull, tagFalse, tagTrue:
		return 1, true
	case tagNumber:
		return 9, len(b) >= 9
	case tagString:
		n, ok := stringKeyLen(b[1:])
		return 1 + n, ok
	case tagArray:
		i := 1
		for i < len(b) && b[i] != tagEnd {
			n, ok := keyLen(b[i:], nameLen)
			if !ok {
				return 0, false
			}
			i += n
		}
		return i + 1, i < len(b)
	case tagObject:
		i := 1
		for i < len(b) && b[i] == tagMember {
			n, ok := nameLen(b[i+1:])
			if !ok {
				return 0, false
			}
			i += 1 + n
			if n, ok = keyLen(b[i:], nameLen); !ok {
				return 0, false
			}
			i += n
		}
		return i + 1, i < len(b) && b[i] == tagEnd
	}
	return 0, false
}

// stringKeyLen is the length of appendStringKey's output at the start of
// b: primary units up to a 00 (a mark byte carries three bytes of code
// point, which may be 00), then the secondary and tertiary levels, each
// ending with 00.
func stringKeyLen(b []byte) (int, bool) {
	i := 0
	for ; i < len(b) && b[i] != 0; i++ {
		if b[i] == symbolMark || b[i] == otherMark {
			i += 3
		}
	}
	for level := 0; level < 3; level++ {
		if i >= len(b) {
			return 0, false
		}
		if level > 0 {
			for i < len(b) && b[i] != 0 {
				i++
			}
			if i >= len(b) {
				return 0, false
			}
		}
		i++ // the level's 00
	}
	return i, true
}

// rawStringLen is the length of appendRawString's output at the start of
// b: up to the 00 01 that ends it, 00 FF being an escaped 00.
func rawStringLen(b []byte) (int, bool) {
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if b[i+1] == 1 {
			return i + 2, true
		}
		if b[i+1] != 0xFF {
			return 0, false
		}
		i++
	}
	return 0, false
}
