package indexstore

import "github.com/settee/settee/internal/mango"

// KeyVersion names the key encoding of mango_entries; the store rebuilds
// the indexes of a file written with another (Writer.Rebuild).
const KeyVersion = "3"

// EntryKey appends the stored key of doc in index def: the fields' key, 00,
// the id.
func EntryKey(dst []byte, def *mango.Index, doc map[string]any, id string) ([]byte, bool) {
	dst, ok := def.Entry(dst, doc)
	if !ok {
		return dst, false
	}
	return append(append(dst, 0), id...), true
}

// decodeMembers decodes what the indexes of set read from a stored body:
// only the members their fields start with (see Set.need). Keys computed
// from it are those of the whole body, from which the invariant check
// computes them.
func decodeMembers(set *Set, id, rev string, body []byte) (map[string]any, error) {
	return mango.DecodeDoc(id, rev, body, set.need())
}
