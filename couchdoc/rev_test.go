package couchdoc

import (
	"errors"
	"strings"
	"testing"
)

// The cases follow CouchDB 3.5.0's couch_doc:parse_rev, parse_revid and
// revid_to_str (src/couch/src/couch_doc.erl at the 3.5.0 tag): the
// generation is list_to_integer of the text before the first '-', the id
// the rest; a 32-byte id is list_to_integer(Id, 16) kept as 128 bits, any
// other id its bytes; a 16-byte id prints as 32 lower-case hex digits.
// "1-x", "2-import42", "1-" and the refusal of "abc" are CouchDB 3.5.0's
// answers as observed (issue 27; testdata/couchdb35 requests#28).
func TestParseRevCouchDBRule(t *testing.T) {
	hex32 := "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		in, canon string // canon "" means refused
	}{
		{"1-x", "1-x"},
		{"2-import42", "2-import42"},
		{"1-", "1-"},
		{"3-a-b", "3-a-b"}, // the id runs to the end, dashes and all
		{"1-" + hex32, "1-" + hex32},
		{"1-" + strings.ToUpper(hex32), "1-" + hex32},
		{"7-" + hex32 + hex32, "7-" + hex32 + hex32}, // 64 hex digits: kept as sent
		{"7-" + strings.ToUpper(hex32+hex32), "7-" + strings.ToUpper(hex32+hex32)},
		{"1-0123456789abcdef", "1-30313233343536373839616263646566"}, // 16 bytes print as hex
		{"1-abcdefghijklmnop", "1-6162636465666768696a6b6c6d6e6f70"},
		{"1-+" + hex32[1:], "1-0" + hex32[1:]},
		{"1--0000000000000000000000000000001", "1-ffffffffffffffffffffffffffffffff"}, // two's complement
		{"+1-x", "1-x"},
		{"01-x", "1-x"},
		{"0-x", "0-x"},
		{"00-x", "0-x"},
		{"1-caf\u00e9", "1-caf\u00e9"},
		{"99999999999-a", "99999999999-a"},
		{"abc", ""},
		{"-1-x", ""},
		{"-x", ""},
		{"a-1", ""},
		{" 1-x", ""},
		{"1 -x", ""},
		{"+-x", ""},
		{"1.5-x", ""},
		{"1-" + strings.Repeat("g", 32), ""}, // 32 bytes that are not hex
		{"1-+" + strings.Repeat("0", 30) + "+", ""},
		{"1-" + hex32[:31] + " ", ""},
		{"99999999999999999999-a", ""}, // beyond int: refused (CouchDB takes any integer)
	} {
		got, err := CanonRev(tc.in)
		if tc.canon == "" {
			var ce *Error
			if !errors.Is(err, ErrBadRequest) || !errors.As(err, &ce) || ce.Reason != "Invalid rev format" {
				t.Errorf("CanonRev(%q) = %q, %v; want bad_request Invalid rev format", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.canon {
			t.Errorf("CanonRev(%q) = %q, %v; want %q", tc.in, got, err, tc.canon)
		}
	}
}

// TestCompareRevIDs checks CouchDB's order of rev ids (Erlang's order of
// the binaries couch_doc:parse_revid keeps): a 32-digit id compares by its
// 16 bytes, with any other id by bytes, a prefix first.
func TestCompareRevIDs(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0123456789abcdef0123456789abcdef", "f123456789abcdef0123456789abcdef", -1},
		{"x", "y", -1},
		{"import42", "import5", -1},
		{"a", "ab", -1},
		{"", "a", -1},
		// 0x78 ('x') > 0x01, the first byte of the hex id.
		{"x", "0123456789abcdef0123456789abcdef", 1},
		// The hex id's first byte 0x61 is 'a': "a" is its prefix.
		{"a", "61626364656667686970717273747576", -1},
		{"b", "61626364656667686970717273747576", 1},
		// A canonical 32-digit id and the 64-digit one it starts: the 16
		// bytes against the 64 ASCII digits ("6" is 0x36 > 0x01).
		{"0123456789abcdef0123456789abcdef", "6123456789abcdef0123456789abcdef6123456789abcdef0123456789abcdef", -1},
		{"ffffffffffffffffffffffffffffffff", "zz", 1},
	} {
		if got := CompareRevIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareRevIDs(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := CompareRevIDs(tc.b, tc.a); got != -tc.want {
			t.Errorf("CompareRevIDs(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

// TestCanonRevisions checks the ids of _revisions: each is kept as CouchDB
// keeps it, and a 32-byte one that is not hex is CouchDB's doc_validation.
func TestCanonRevisions(t *testing.T) {
	r := &Revisions{Start: 3, IDs: []string{"import42", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef"}}
	if err := ValidateRevisions("3-import42", r); err != nil {
		t.Fatal(err)
	}
	want := []string{"import42", "0123456789abcdef0123456789abcdef", "30313233343536373839616263646566"}
	if strings.Join(r.IDs, ",") != strings.Join(want, ",") {
		t.Fatalf("ids %v, want %v", r.IDs, want)
	}
	err := CanonRevisions(&Revisions{Start: 1, IDs: []string{strings.Repeat("z", 32)}})
	var ce *Error
	if !errors.Is(err, ErrDocValidation) || !errors.As(err, &ce) || ce.Reason != "RevId isn't a valid hexadecimal" {
		t.Fatalf("non-hex 32-byte id: %v", err)
	}
}

// TestParseDocCanonRev checks that a parsed document carries its _rev and
// _revisions as CouchDB keeps them.
func TestParseDocCanonRev(t *testing.T) {
	for _, src := range []string{
		`{"_id":"a","_rev":"02-0123456789ABCDEF0123456789ABCDEF","_revisions":{"start":2,"ids":["0123456789abcdef0123456789ABCDEF","x"]}}`,
		`{"_rev":"02-0123456789ABCDEF0123456789ABCDEF","_revisions":{"ids":["0123456789abcdef0123456789ABCDEF","x"],"start":2},"_id":"a","z":[1]}`,
	} {
		doc, err := ParseDoc([]byte(src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if doc.Rev != "2-0123456789abcdef0123456789abcdef" || doc.Revisions.IDs[0] != "0123456789abcdef0123456789abcdef" || doc.Revisions.IDs[1] != "x" {
			t.Fatalf("%s: rev %q revisions %v", src, doc.Rev, doc.Revisions)
		}
	}
	for _, src := range []string{`{"_id":"a","_rev":"1-x"}`, `{"_id":"a","_rev":"1-"}`, `{"_id":"a","_rev":"2-import42","_revisions":{"start":2,"ids":["import42","a"]}}`} {
		if _, err := ParseDoc([]byte(src)); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	if _, err := ParseDoc([]byte(`{"_id":"a","_rev":"abc"}`)); !errors.Is(err, ErrBadRequest) {
		t.Errorf("_rev abc: %v", err)
	}
}
