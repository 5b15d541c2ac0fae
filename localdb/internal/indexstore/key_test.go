package indexstore_test

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/indexstore"
)

// indexOn returns the json index of designBody(fields...) on field.
func indexOn(t *testing.T, field string, fields ...string) *mango.Index {
	t.Helper()
	for _, ix := range mango.IndexesFromDesign("_design/t", []byte(designBody(fields...))) {
		if ix.Name == "by-"+field {
			return ix
		}
	}
	t.Fatalf("no index on %s", field)
	return nil
}

// decode decodes a document body as the Writer does (numbers as
// json.Number).
func decode(t *testing.T, id, body string) map[string]any {
	t.Helper()
	doc, err := mango.DecodeDoc(id, "1-a", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestEntryKeyOrder: entry keys sort as CouchDB collates the indexed
// values (null, false, true, numbers, strings, arrays, objects, and in
// order within each), ties by document id, a longer value after its
// prefix whatever the ids; the id is the key's tail after the value and
// a 00.
func TestEntryKeyOrder(t *testing.T) {
	ix := indexOn(t, "v", "v")
	// In order: [id, value].
	want := [][2]string{
		{"z1", `null`}, {"z2", `false`}, {"z3", `true`},
		{"y1", `-1000`}, {"y2", `-1.5`}, {"y3", `0`}, {"a", `2`}, {"b", `2`}, {"y4", `10`}, {"y5", `1e300`},
		{"x1", `""`}, {"x2", `"1"`}, {"z", `"a"`}, {"x4", `"A"`}, {"a", `"ab"`}, {"x6", `"b"`}, {"x7", `"é"`}, {"x8", `"f"`},
		{"w1", `[]`}, {"w2", `[1]`}, {"w3", `[1,2]`}, {"w4", `["a"]`},
		{"v1", `{}`}, {"v2", `{"a":1}`}, {"v3", `{"a":2}`}, {"v4", `{"b":0}`},
	}
	var keys [][]byte
	for _, w := range want {
		key, ok := indexstore.EntryKey(nil, ix, decode(t, w[0], `{"v":`+w[1]+`}`), w[0])
		if !ok {
			t.Fatalf("%s: no entry for {\"v\": %s}", w[0], w[1])
		}
		n, ok := mango.KeyLen(key)
		if !ok || key[n] != 0 || string(key[n+1:]) != w[0] || !bytes.Equal(key[:n], keyOf(t, w[1])) {
			t.Fatalf("%s: entry key %x is not the value's key, 00 and the id", w[0], key)
		}
		keys = append(keys, key)
	}
	got := slices.Clone(keys)
	rand.New(rand.NewSource(1)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	slices.SortFunc(got, bytes.Compare)
	for i := range want {
		if !bytes.Equal(got[i], keys[i]) {
			j := slices.IndexFunc(keys, func(k []byte) bool { return bytes.Equal(k, got[i]) })
			t.Fatalf("position %d holds %s %s, want %s %s", i, want[j][0], want[j][1], want[i][0], want[i][1])
		}
	}
}

// TestEntryKeyMissingField: as CouchDB's json indexes, a document is in
// an index only when it has every indexed field (null is a value), a
// nested field included, and matches the partial filter selector.
func TestEntryKeyMissingField(t *testing.T) {
	two := mango.IndexesFromDesign("_design/t", []byte(`{"language":"query","views":{"ab":{"map":{"fields":{"a":"asc","b.c":"asc"},"partial_filter_selector":{}}}}}`))[0]
	partial := mango.IndexesFromDesign("_design/t", []byte(`{"language":"query","views":{"p":{"map":{"fields":{"a":"asc"},"partial_filter_selector":{"type":{"$eq":"x"}}}}}}`))[0]
	for _, c := range []struct {
		ix   *mango.Index
		body string
		in   bool
	}{
		{two, `{"a":1,"b":{"c":2}}`, true},
		{two, `{"a":null,"b":{"c":null}}`, true},
		{two, `{"a":1}`, false},
		{two, `{"b":{"c":2}}`, false},
		{two, `{"a":1,"b":{"d":2}}`, false},
		{two, `{"a":1,"b":"c"}`, false},
		{two, `{"a":1,"b.c":2}`, false},
		{partial, `{"a":1,"type":"x"}`, true},
		{partial, `{"a":1,"type":"y"}`, false},
		{partial, `{"a":1}`, false},
		{partial, `{"type":"x"}`, false},
	} {
		key, ok := indexstore.EntryKey([]byte("prefix"), c.ix, decode(t, "d", c.body), "d")
		if ok != c.in {
			t.Errorf("index %s, %s: in the index = %v, want %v", c.ix.Name, c.body, ok, c.in)
		}
		if !bytes.HasPrefix(key, []byte("prefix")) {
			t.Errorf("index %s, %s: EntryKey did not append to dst: %q", c.ix.Name, c.body, key)
		}
	}
}

// TestEntryKeyJSONNumbers: a number keys the same however it is written,
// so a document written 2.0 is found by a query for 2.
func TestEntryKeyJSONNumbers(t *testing.T) {
	ix := indexOn(t, "v", "v")
	var keys [][]byte
	for _, n := range []string{`2`, `2.0`, `2e0`, `20e-1`} {
		key, _ := indexstore.EntryKey(nil, ix, decode(t, "d", `{"v":`+n+`}`), "d")
		keys = append(keys, key)
	}
	for i := 1; i < len(keys); i++ {
		if !bytes.Equal(keys[i], keys[0]) {
			t.Errorf("key of %d differs from the first: %x vs %x", i, keys[i], keys[0])
		}
	}
}
