package mango

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// EncodeViewKey appends the memcomparable encoding of a view key (JSON
// text) in the collation CouchDB gives view keys: EncodeKey's, except
// that objects compare member by member in the order they were written,
// each member's name collated as a string, as couch_ejson_compare does
// (Mango's encoding sorts members by name instead).
func EncodeViewKey(dst []byte, key []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(key))
	dec.UseNumber()
	dst, err := encodeViewValue(dst, dec)
	if err != nil {
		return nil, fmt.Errorf("view key: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("view key: more than one value")
	}
	return dst, nil
}

func encodeViewValue(dst []byte, dec *json.Decoder) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			dst = append(dst, tagArray)
			for dec.More() {
				if dst, err = encodeViewValue(dst, dec); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return append(dst, tagEnd), nil
		case '{':
			dst = append(dst, tagObject)
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					return nil, err
				}
				s, ok := name.(string)
				if !ok {
					return nil, errors.New("object member name is not a string")
				}
				dst = EncodeKey(append(dst, tagMember), s)
				if dst, err = encodeViewValue(dst, dec); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return append(dst, tagEnd), nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return EncodeKey(dst, tok), nil
}

// viewKeyLen is KeyLen for EncodeViewKey's encodings, whose object
// member names are string encodings.
func viewKeyLen(b []byte) (int, bool) { return keyLen(b, viewKeyLen) }

// ViewKeyGroup returns the encoding of the key a view row groups under at
// group_level level: an array key cut to its first level elements, any
// other key itself. ok is false for bytes EncodeViewKey did not make.
func ViewKeyGroup(dst, key []byte, level int) ([]byte, bool) {
	if len(key) == 0 || key[0] != tagArray {
		return append(dst, key...), true
	}
	i := 1
	for n := 0; n < level && i < len(key) && key[i] != tagEnd; n++ {
		l, ok := viewKeyLen(key[i:])
		if !ok {
			return nil, false
		}
		i += l
	}
	dst = append(dst, key[:i]...)
	return append(dst, tagEnd), true
}
