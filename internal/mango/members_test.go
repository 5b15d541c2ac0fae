package mango

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var memberBodies = []string{
	`{}`,
	` { "a" : 1 , "b":"x" } `,
	`{"a":-0.5e+3,"b":"caf\u00e9 \"q\"","c":[1,{"d":"}"}],"e":{"f":null},"g":true,"h":false}`,
	`{"a":1,"a":2}`,
	`{"\u0061":"escaped name","b\"c":3}`,
	`{"s":"tab\there","u":"é✓","n":null,"big":12345678901234567890,"z":0}`,
	`{"nested":{"a":{"b":[[],{}]}},"x":"]}"}`,
}

// TestDecodeMembers checks that the members DecodeMembers keeps are what
// encoding/json (UseNumber) decodes for them.
func TestDecodeMembers(t *testing.T) {
	for _, body := range memberBodies {
		checkMembers(t, []byte(body))
	}
	for _, bad := range []string{``, `[]`, `"a"`, `{"a":1`, `{"a" 1}`, `{"a":1,}`, `{"a":1} x`, `{a:1}`} {
		if _, err := DecodeMembers([]byte(bad), map[string]bool{"a": true}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func checkMembers(t testing.TB, body []byte) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var full map[string]any
	if !json.Valid(body) || dec.Decode(&full) != nil || full == nil {
		return
	}
	names := map[string]bool{"missing": true}
	for k := range full {
		names[k] = true
	}
	got, err := DecodeMembers(body, names)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if !reflect.DeepEqual(got, full) {
		t.Fatalf("%s: got %#v, want %#v", body, got, full)
	}
	for k := range full {
		part, err := DecodeMembers(body, map[string]bool{k: true})
		if err != nil || len(part) != 1 || !reflect.DeepEqual(part[k], full[k]) {
			t.Fatalf("%s: member %q alone: %#v, %v", body, k, part, err)
		}
	}
}

func FuzzDecodeMembers(f *testing.F) {
	for _, b := range memberBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkMembers(t, body) })
}
