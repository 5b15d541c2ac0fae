package couchdoc

import (
	"bytes"
	"encoding/json"
	"errors"
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

// TestCompactBody: the stored-body check accepts exactly the JSON objects
// json.Valid accepts and compacts them as json.Compact does.
func TestCompactBody(t *testing.T) {
	check := func(s string) {
		t.Helper()
		got, err := CompactBody([]byte(s))
		trimmed := strings.TrimSpace(s)
		if trimmed == "" {
			if err != nil || string(got) != "{}" {
				t.Fatalf("CompactBody(%q) = %s, %v; want {}", s, got, err)
			}
			return
		}
		if !json.Valid([]byte(s)) || trimmed[0] != '{' {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("CompactBody(%q) = %s, %v; want ErrBadRequest", s, got, err)
			}
			return
		}
		var want bytes.Buffer
		_ = json.Compact(&want, []byte(s))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("CompactBody(%q) = %s, %v; want %s", s, got, err, want.Bytes())
		}
	}
	for _, s := range validSeeds {
		check(s)
	}
	for _, s := range parseSeeds {
		check(s)
	}
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		check(string(mutate(rng, randomDoc(rng))))
	}
}

func FuzzCompactBody(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := CompactBody(data)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("CompactBody(%q): untyped error %v", data, err)
			}
			if len(bytes.TrimSpace(data)) > 0 && json.Valid(data) && bytes.TrimSpace(data)[0] == '{' {
				t.Fatalf("CompactBody(%q) refused a JSON object: %v", data, err)
			}
			return
		}
		var want bytes.Buffer
		if len(bytes.TrimSpace(data)) == 0 {
			want.WriteString("{}")
		} else if cerr := json.Compact(&want, data); cerr != nil {
			t.Fatalf("CompactBody(%q) accepted invalid JSON", data)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("CompactBody(%q) = %s, want %s", data, got, want.Bytes())
		}
	})
}

// BenchmarkCompactBody: the store's check of a parsed body, against
// ParseDoc of the same document (in the same run) for scale.
func BenchmarkCompactBody(b *testing.B) {
	doc, err := ParseDoc(benchDoc(false))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("compactbody", func(b *testing.B) {
		b.SetBytes(int64(len(doc.Body)))
		for b.Loop() {
			if _, err := CompactBody(doc.Body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parsedoc", func(b *testing.B) { benchmarkParse(b, ParseDoc, false) })
}

// TestValidBody: a body ParseDoc produced is not checked again; any other,
// including one replaced after parsing, is.
func TestValidBody(t *testing.T) {
	doc, err := ParseDoc([]byte(`{"_id":"a", "x" : [1, 2]}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := doc.ValidBody(); err != nil || string(b) != `{"x":[1,2]}` || &b[0] != &doc.Body[0] {
		t.Fatalf("parsed body: %s %v", b, err)
	}
	cp := *doc
	cp.Body = []byte(`{"y" : 1}`)
	if b, err := cp.ValidBody(); err != nil || string(b) != `{"y":1}` {
		t.Fatalf("replaced body: %s %v", b, err)
	}
	cp.Body = []byte(`{"y":`)
	if _, err := cp.ValidBody(); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("replaced with invalid JSON: %v", err)
	}
	if _, err := (&Doc{Body: []byte(`[]`)}).ValidBody(); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("not an object: %v", err)
	}
}
