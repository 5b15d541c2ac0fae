package couchdoc

import (
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e5`, `1E+5`, `1e`, `1e-`, `-1.5e-3`, `.5`, `+1`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `nullnull`, `[1,]`, `[,1]`, `[1 2]`, `{"a"}`, `{"a":}`, `{"a":1,}`,
	`{"a":1 "b":2}`, `{1:2}`, `{"a":1}}`, `[[[]]]`, `[{]}`, `{"a":[}`, `"\u00e9"`, `"\u00g9"`, `"\u00e"`, `"\x"`, `"\/"`,
	`"a` + "\x01" + `"`, "\"\xff\xfe\"", `"\"`, `"\\"`, ` {"a" : [ 1 , { "b" : null } ] } `, "\t[\r\n1\n]", `[1]x`, `[1] `,
	`{"a":1,"a":2}`, `{"":""}`, `["a",["b",{"c":[true,false,null,-0.0e0]}]]`, `[` + "\u2028" + `]`,
}

func TestValidJSONMatchesStdlib(t *testing.T) {
	check := func(s string) {
		t.Helper()
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", s, got, want)
		}
	}
	for _, s := range validSeeds {
		check(s)
	}
	for _, s := range parseSeeds {
		check(s)
	}
	// The nesting bound.
	for _, n := range []int{maxNestingDepth - 1, maxNestingDepth, maxNestingDepth + 1} {
		check(strings.Repeat("[", n) + strings.Repeat("]", n))
		check(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n))
	}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 20000; i++ {
		check(string(mutate(rng, randomDoc(rng))))
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", data, got, want)
		}
	})
}
