package wire

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/settee/settee/couchdoc"
)

// refusedDoc is the answer to a document a peer sent whole (its entry or
// part was read to its end) that couchdoc.ParseDoc refuses: a *RevError
// with Refused set, naming the document and revision as far as they can
// be read, so the caller fails that document alone and reads on. An error
// that is not ParseDoc's is a *MalformedError of the answer.
func refusedDoc(what string, js []byte, err error) error {
	var ce *couchdoc.Error
	if !errors.As(err, &ce) {
		return malformed(what, err)
	}
	id, rev := docIDRev(js)
	return &RevError{ID: id, Rev: rev, Err: ce, Refused: true}
}

// docIDRev reads the _id and _rev of a document's JSON leniently: the
// members when it is a JSON object, else the first string after each key
// ("" when there is none).
func docIDRev(js []byte) (id, rev string) {
	var head struct {
		ID  any `json:"_id"`
		Rev any `json:"_rev"`
	}
	if json.Unmarshal(js, &head) == nil {
		id, _ = head.ID.(string)
		rev, _ = head.Rev.(string)
		return id, rev
	}
	return stringAfter(js, `"_id"`), stringAfter(js, `"_rev"`)
}

// stringAfter returns the JSON string following key and a colon in js, or
// "".
func stringAfter(js []byte, key string) string {
	i := bytes.Index(js, []byte(key))
	if i < 0 {
		return ""
	}
	i = skipSpace(js, i+len(key))
	if i == len(js) || js[i] != ':' {
		return ""
	}
	i = skipSpace(js, i+1)
	if i == len(js) || js[i] != '"' {
		return ""
	}
	for j := i + 1; j < len(js); j++ {
		switch js[j] {
		case '\\':
			j++
		case '"':
			var s string
			if json.Unmarshal(js[i:j+1], &s) != nil {
				return ""
			}
			return s
		}
	}
	return ""
}

// refusedOr hands a refused document's *RevError to fn; any other error is
// returned.
func refusedOr(fn DocFunc, err error) error {
	var re *RevError
	if errors.As(err, &re) {
		return fn(nil, re)
	}
	return err
}
