package mango

import (
	"bytes"
	"testing"
)

// TestEncodeViewKeyOrder: view keys sort as CouchDB sorts them, objects
// by their members in written order.
func TestEncodeViewKeyOrder(t *testing.T) {
	ordered := []string{
		`null`, `false`, `true`, `-1`, `0`, `1.5`, `2`, `"a"`, `"b"`, `"B"`,
		`[]`, `[1]`, `[1,2]`, `[2]`, `["a"]`, `[{}]`,
		`{}`, `{"a":1}`, `{"a":1,"b":0}`, `{"a":2}`, `{"b":0,"a":1}`, `{"b":1}`,
	}
	var prev []byte
	for i, k := range ordered {
		enc, err := EncodeViewKey(nil, []byte(k))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if i > 0 && bytes.Compare(prev, enc) >= 0 {
			t.Errorf("%s does not sort after %s", k, ordered[i-1])
		}
		prev = enc
	}
	for _, bad := range []string{``, `{`, `[1,`, `1 2`, `{"a"}`} {
		if _, err := EncodeViewKey(nil, []byte(bad)); err == nil {
			t.Errorf("%q encoded", bad)
		}
	}
	// Scalars and arrays encode as EncodeKey does.
	a, _ := EncodeViewKey(nil, []byte(`["x",1,null,[true]]`))
	if b := EncodeKey(nil, []any{"x", 1.0, nil, []any{true}}); !bytes.Equal(a, b) {
		t.Errorf("array encodings differ: %x %x", a, b)
	}
}

func FuzzEncodeViewKey(f *testing.F) {
	f.Add([]byte(`{"b":[1,{"a":null}],"a":"x"}`))
	f.Add([]byte(`[1,"2",{}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = EncodeViewKey(nil, b)
	})
}

// TestViewKeyGroup: cutting an encoded array key to a group level gives
// the encoding of the cut array.
func TestViewKeyGroup(t *testing.T) {
	for _, c := range []struct {
		key   string
		level int
		want  string
	}{
		{`["a",{"x":[1,"y"]},3]`, 1, `["a"]`},
		{`["a",{"x":[1,"y"]},3]`, 2, `["a",{"x":[1,"y"]}]`},
		{`["a",{"x":[1,"y"]},3]`, 5, `["a",{"x":[1,"y"]},3]`},
		{`["a"]`, 0, `[]`},
		{`"s"`, 1, `"s"`},
		{`{"b":1}`, 1, `{"b":1}`},
	} {
		key, _ := EncodeViewKey(nil, []byte(c.key))
		want, _ := EncodeViewKey(nil, []byte(c.want))
		got, ok := ViewKeyGroup(nil, key, c.level)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%s at %d: %x, want %x (%s)", c.key, c.level, got, want, c.want)
		}
	}
}
