package mango

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"sort"
	"testing"
)

// randValue makes a random JSON value, biased to collide often.
func randValue(r *rand.Rand, depth int) any {
	strs := []string{"", "a", "A", "b", "B", "ab", "aB", "Ab", "a b", "a-b", "a_b", "0", "9", "é", "e", "z", "Z", "~", "$", "a\x00", "日本", "ß", " ", "☃", "🚀", "∑x", "«", "ñandú", "Ñ", "ss", "æ", "ae", "AE", "Æ", "ø", "o\u0301", "ó"}
	nums := []string{"0", "-0", "1", "-1", "1.5", "-1.5", "1e300", "-1e300", "2", "10", "0.1", "1e-300", "1e400"}
	switch k := r.Intn(8); {
	case k == 0:
		return nil
	case k == 1:
		return r.Intn(2) == 0
	case k == 2 || k == 3:
		return json.Number(nums[r.Intn(len(nums))])
	case k == 4 || k == 5 || depth > 2:
		return strs[r.Intn(len(strs))]
	case k == 6:
		n := r.Intn(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randValue(r, depth+1)
		}
		return a
	}
	m := map[string]any{}
	for i := r.Intn(3); i > 0; i-- {
		m[strs[r.Intn(len(strs))]] = randValue(r, depth+1)
	}
	return m
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

func TestEncodeKeyOrderMatchesCompare(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		a, b := randValue(r, 0), randValue(r, 0)
		ka, kb := EncodeKey(nil, a), EncodeKey(nil, b)
		if got, want := sign(bytes.Compare(ka, kb)), Compare(a, b); got != want {
			t.Fatalf("a=%#v b=%#v: key order %d, Compare %d\nka=%x\nkb=%x", a, b, got, want, ka, kb)
		}
		// Sequences of values compare like arrays of them.
		sa := EncodeKey(EncodeKey(nil, a), b)
		sb := EncodeKey(EncodeKey(nil, b), a)
		if got, want := sign(bytes.Compare(sa, sb)), Compare([]any{a, b}, []any{b, a}); got != want {
			t.Fatalf("[%#v %#v] vs reversed: key order %d, Compare %d", a, b, got, want)
		}
	}
}

func TestStringCollation(t *testing.T) {
	// ICU root order for these strings (CouchDB's collation spec examples).
	want := []string{" ", "_", "-", ",", ";", ":", "!", "?", ".", "'", "\"", "(", ")", "[", "]", "{", "}",
		"@", "*", "/", "\\", "&", "#", "%", "`", "^", "+", "<", "=", ">", "|", "~", "$",
		// Non-ASCII symbols come before digits, as CouchDB's ICU orders the
		// tags of couchdb35-extra/find#30 ("☃" and "🚀" before "alpha").
		"☃", "☃a", "🚀",
		"0", "1", "9", "a", "A", "aa", "aA", "Aa", "AA", "ab", "b", "B", "ba",
		// Accented Latin letters sort with their base letter, after it
		// (couchdb35-extra/find#30: "ñandú" before "replicate").
		"e", "E", "é", "É", "è", "eé", "f", "ñandú", "nz", "o", "ø", "p", "replicate", "ss", "ß", "st", "z", "Z"}
	got := append([]string(nil), want...)
	r := rand.New(rand.NewSource(2))
	r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
	sort.Slice(got, func(i, j int) bool { return Compare(got[i], got[j]) < 0 })
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sorted %q, want %q", got, want)
		}
	}
}

func TestMixedTypeOrder(t *testing.T) {
	vals := []string{`null`, `false`, `true`, `-5`, `0`, `2.5`, `"A"`, `"b"`, `[]`, `[null]`, `[1]`, `[1,2]`, `["a"]`, `{}`, `{"a":1}`, `{"a":2}`, `{"b":0}`}
	var prev []byte
	for i, s := range vals {
		var v any
		d := json.NewDecoder(bytes.NewReader([]byte(s)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		k := EncodeKey(nil, v)
		if i > 0 && bytes.Compare(prev, k) >= 0 {
			t.Fatalf("%s does not sort after %s", s, vals[i-1])
		}
		prev = k
	}
}

// TestStringKeyOrderRandom: on random strings over letters, accented and
// expanding letters, symbols and other scripts, key order is Compare's and
// Compare is a total order (antisymmetric, equal only when identical).
func TestStringKeyOrderRandom(t *testing.T) {
	alphabet := []rune("aAbeEéÉèñÑnoøØsßSæÆzZ0 -~☃🚀日\u0301")
	r := rand.New(rand.NewSource(5))
	gen := func() string {
		rs := make([]rune, r.Intn(5))
		for i := range rs {
			rs[i] = alphabet[r.Intn(len(alphabet))]
		}
		return string(rs)
	}
	for i := 0; i < 20000; i++ {
		a, b := gen(), gen()
		ka, kb := EncodeKey(nil, a), EncodeKey(nil, b)
		c := Compare(a, b)
		if sign(bytes.Compare(ka, kb)) != c {
			t.Fatalf("%q %q: key order %d, Compare %d", a, b, bytes.Compare(ka, kb), c)
		}
		if Compare(b, a) != -c || (c == 0) != (a == b) {
			t.Fatalf("%q %q: Compare %d, reversed %d", a, b, c, Compare(b, a))
		}
	}
}

// TestKeyLen: KeyLen finds the end of every encoding, whatever follows it,
// and refuses every encoding cut short.
func TestKeyLen(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 20000; i++ {
		v := randValue(r, 0)
		if r.Intn(4) == 0 {
			v = string(rune(r.Intn(0x2FFFF)+1)) + string(rune(0x10000+r.Intn(0x100))) + "x"
		}
		enc := EncodeKey(nil, v)
		tail := []byte{0, byte(r.Intn(256)), 'i', 'd'}
		if n, ok := KeyLen(append(enc[:len(enc):len(enc)], tail...)); !ok || n != len(enc) {
			t.Fatalf("KeyLen(%#v + tail) = %d, %v; want %d (% x)", v, n, ok, len(enc), enc)
		}
		for cut := 0; cut < len(enc); cut++ {
			if n, ok := KeyLen(enc[:cut]); ok {
				t.Fatalf("KeyLen(%#v cut to %d) = %d, true (% x)", v, cut, n, enc)
			}
		}
	}
}

// FuzzKeyLen: KeyLen reads stored keys, so any bytes get an answer, never
// a panic, within the input; and an encoding it accepts is one: the
// bytes it spans hold no shorter whole encoding than themselves.
func FuzzKeyLen(f *testing.F) {
	for _, v := range []any{nil, true, json.Number("1.5"), "abc", "Ñandú", "日本", []any{"a", 1.0}, map[string]any{"k\x00": []any{}}} {
		f.Add(append(EncodeKey(nil, v), 0, 'i', 'd'))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := KeyLen(b)
		if !ok {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("KeyLen(% x) = %d of %d bytes", b, n, len(b))
		}
		if m, ok := KeyLen(b[:n]); !ok || m != n {
			t.Fatalf("KeyLen(% x) = %d, but KeyLen of those %d bytes = %d, %v", b, n, n, m, ok)
		}
	})
}
