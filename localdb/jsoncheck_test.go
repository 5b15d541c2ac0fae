package localdb

import (
	"encoding/json"
	"testing"
)

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2.5e-3,-0,true,false,null,"x\u00e9\n"]}`, ` { "a" : 1 } `, `{"a":01}`, `[`, `"\x"`, `1.`, `-`, `{"a":1,}`, "\"\x01\"", `{"a":{"b":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid, _ := checkJSON(b)
		if valid != json.Valid(b) {
			t.Fatalf("checkJSON(%q) = %v, json.Valid = %v", b, valid, !valid)
		}
	})
}
