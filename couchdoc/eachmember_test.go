package couchdoc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzEachMember checks EachMember against encoding/json on JSON objects
// (every member, in order, keys and values as written), that it refuses
// other JSON, and that no bytes make it panic.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":{"c":[1,"}"]}, "a":null } `, `{"\"k":"v\\"}`, `[1]`, `{"a":1`, `{"a"}`, `{"a":1,}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var keys []string
		var values []json.RawMessage
		ok := EachMember(data, func(key, value []byte) bool {
			keys = append(keys, string(key))
			values = append(values, append(json.RawMessage(nil), value...))
			return true
		})
		if !json.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		tok, _ := dec.Token()
		if d, isDelim := tok.(json.Delim); !isDelim || d != '{' {
			if ok {
				t.Fatalf("%q: walked JSON that is not an object", data)
			}
			return
		}
		var wantKeys []string
		var wantValues []json.RawMessage
		for dec.More() {
			k, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			q, _ := json.Marshal(k)
			wantKeys = append(wantKeys, string(q))
			wantValues = append(wantValues, v)
		}
		if !ok || len(keys) != len(wantKeys) {
			t.Fatalf("%q: %v %q, want %q", data, ok, keys, wantKeys)
		}
		for i := range keys {
			var got, want any
			if json.Unmarshal([]byte(keys[i]), &got) != nil || json.Unmarshal([]byte(wantKeys[i]), &want) != nil || got != want {
				t.Fatalf("%q: key %d %s, want %s", data, i, keys[i], wantKeys[i])
			}
			var gv, wv any
			if json.Unmarshal(values[i], &gv) != nil || json.Unmarshal(wantValues[i], &wv) != nil || !reflect.DeepEqual(gv, wv) {
				t.Fatalf("%q: value %d %s, want %s", data, i, values[i], wantValues[i])
			}
		}
	})
}

// FuzzEachElement checks EachElement against encoding/json on JSON arrays,
// that it refuses other JSON, and that no bytes make it panic.
func FuzzEachElement(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "]" , {"a":[2]} , null ] `, `{"a":1}`, `[1,`, `[1 2]`, `[,]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []json.RawMessage
		ok := EachElement(data, func(v []byte) bool {
			got = append(got, append(json.RawMessage(nil), v...))
			return true
		})
		var want []json.RawMessage
		if json.Unmarshal(data, &want) != nil || want == nil {
			if ok && json.Valid(data) {
				t.Fatalf("%q: walked JSON that is not an array", data)
			}
			return
		}
		if !ok || len(got) != len(want) {
			t.Fatalf("%q: %v %d elements, want %d", data, ok, len(got), len(want))
		}
		for i := range got {
			var g, w any
			if json.Unmarshal(got[i], &g) != nil || json.Unmarshal(want[i], &w) != nil || !reflect.DeepEqual(g, w) {
				t.Fatalf("%q: element %d %s, want %s", data, i, got[i], want[i])
			}
		}
	})
}
