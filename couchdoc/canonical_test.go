package couchdoc

import (
	"bytes"
	"testing"
)

var canonicalSeeds = []string{
	`{"b":1,"a":{"d":[1,2,{"z":null,"y":true}],"c":"x"}}`,
	` { "a" : [ ] , "b" : { } , "c" : "" } `,
	`{"a":1,"a":2,"b":{"x":1},"b":{"y":2}}`,
	`{"s":"quote \" backslash \\ slash \/ \b\f\n\r\t","t":"<&>"}`,
	`{"u":"\u00e9\ud83d\ude00\ud800","v":"é😀 \u2028 ` + "\u2028\u2029" + `"}`,
	`{"n":[0,-0,1.5e10,1E-3,-12.50,100]}`,
	`{"k\"ey":1,"é":2,"Z":3,"a":4}`,
	`{"bad":"` + "\xff\xfe" + `"}`,
	`{"a":1} trailing`,
	`[1,2]`,
	`{"a":01}`,
	`{"a":tru}`,
	`{"a":"ctl` + "\x01" + `"}`,
	``,
	`  `,
	`{"a":[[[[[[[[[[1]]]]]]]]]]}`,
}

// FuzzCanonicalBody checks CanonicalBody (its fast path where it applies)
// against the encoding/json round trip, byte for byte: revision ids hash
// its output.
func FuzzCanonicalBody(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gerr := CanonicalBody(body)
		want, werr := canonicalSlow(body)
		if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, %v; want %q, %v", body, got, gerr, want, werr)
		}
	})
}

// TestCanonicalFastTakesCommonBodies pins which bodies the fast path
// handles itself (the point of it), and checks its output for them.
func TestCanonicalFastTakesCommonBodies(t *testing.T) {
	for _, s := range []string{canonicalSeeds[0], canonicalSeeds[1], canonicalSeeds[2], canonicalSeeds[3], canonicalSeeds[5],
		`{"name":"Zoë","tags":["a","b"],"geo":[12.5,-3.25],"notes":"naïve café 東京"}`, ``} {
		out, ok := canonicalFast([]byte(s))
		if !ok {
			t.Errorf("%q: not taken by the fast path", s)
			continue
		}
		want, err := canonicalSlow([]byte(s))
		if err != nil || !bytes.Equal(out, want) {
			t.Errorf("%q: %q, want %q (%v)", s, out, want, err)
		}
	}
	for _, s := range canonicalSeeds[6:13] {
		if _, ok := canonicalFast([]byte(s)); ok {
			t.Errorf("%q: taken by the fast path, which leaves it to the reference", s)
		}
	}
}

func BenchmarkCanonicalBody(b *testing.B) {
	body := []byte(`{"type":"contact","n":12,"name":"alpha beta","email":"gamma.42@example.com","age":33,"score":512.125,"active":true,"manager":null,"tags":["x","y","z"],"address":{"street":"1 main street","city":"Zürich","zip":"12345","geo":[47.1,8.5]},"history":[{"ts":1600000000000,"event":"created","by":"me"}],"notes":"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua"}`)
	for _, c := range []struct {
		name string
		fn   func([]byte) ([]byte, error)
	}{{"fast", func(b []byte) ([]byte, error) { return CanonicalBody(b) }}, {"reference", func(b []byte) ([]byte, error) { return canonicalSlow(b) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := c.fn(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
