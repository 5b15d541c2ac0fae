package jsfunc

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzAppendASCII checks that the escaped form of any JSON text is ASCII
// and reads as the same value.
func FuzzAppendASCII(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `["東京","😀",1e3,null]`, "\"\xff\"", `{"é":{"ü":[true]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var want any
		if json.Unmarshal(doc, &want) != nil {
			return
		}
		got := appendASCII(nil, doc)
		for _, c := range got {
			if c >= 0x80 {
				t.Fatalf("%q: non-ASCII byte in %q", doc, got)
			}
		}
		var v any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("%q -> %q: %v", doc, got, err)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%q -> %q: %v, want %v", doc, got, v, want)
		}
	})
}
