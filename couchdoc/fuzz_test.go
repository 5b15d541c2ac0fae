package couchdoc

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func FuzzParseRev(f *testing.F) {
	for _, s := range []string{"1-abc", "0-1", "12-0123456789abcdef0123456789abcdef", "-a", "1-", "01-a", "+1-a", "1-xyz",
		"99999999999999999999-a", "2-import42", "1-0123456789ABCDEF0123456789ABCDEF", "1--0123456789abcdef0123456789abcd",
		"1-0123456789abcdef", "3-a-b", "1-\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gen, hash, err := ParseRev(s)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("ParseRev(%q): untyped error %v", s, err)
			}
			if _, err := CanonRev(s); err == nil {
				t.Fatalf("CanonRev(%q) accepts what ParseRev refuses", s)
			}
			return
		}
		canon := FormatRev(gen, hash)
		if gen < 0 || len(hash) == 16 || len(hash) == 32 && strings.ToLower(hash) != hash {
			t.Fatalf("ParseRev(%q) = %d, %q: not canonical", s, gen, hash)
		}
		if c, err := CanonRev(s); err != nil || c != canon {
			t.Fatalf("CanonRev(%q) = %q, %v; want %q", s, c, err, canon)
		}
		// The canonical form is a fixed point.
		if g2, h2, err := ParseRev(canon); err != nil || g2 != gen || h2 != hash {
			t.Fatalf("ParseRev(%q) = %d, %q, %v: not a fixed point", canon, g2, h2, err)
		}
		if c, _ := CanonRev(canon); c != canon {
			t.Fatalf("CanonRev(%q) = %q", canon, c)
		}
		if CompareRevIDs(hash, hash) != 0 {
			t.Fatalf("CompareRevIDs(%q, itself) != 0", hash)
		}
	})
}

func FuzzValidateRevisions(f *testing.F) {
	f.Add("3-c", 3, "c", "b", "a")
	f.Add("3-c", 2, "c", "b", "")
	f.Add("1-a", 1, "a", "", "")
	f.Add("2-b", 2, "b", "zz", "")
	f.Fuzz(func(t *testing.T, rev string, start int, a, b, c string) {
		var ids []string
		for _, id := range []string{a, b, c} {
			if id != "" {
				ids = append(ids, id)
			}
		}
		r := &Revisions{Start: start, IDs: ids}
		err := ValidateRevisions(rev, r)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrDocValidation) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// Accepted: the history expands to valid, consecutive revisions
		// starting with rev.
		h := r.History()
		if c, _ := CanonRev(rev); len(h) == 0 || h[0] != c {
			t.Fatalf("history %v does not start with %s", h, rev)
		}
		for i, x := range h {
			gen, _, err := ParseRev(x)
			if err != nil || gen != start-i {
				t.Fatalf("history entry %q: %v", x, err)
			}
		}
	})
}

func FuzzParseDoc(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"_id":"a","_rev":"1-abc","x":1}`,
		`{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"_deleted":true}`,
		`{"_id":"a","_attachments":{"f":{"content_type":"text/plain","data":"aGk="}}}`,
		`{"_id":"a","_attachments":{"f":{"stub":true,"digest":"md5-x","length":3,"revpos":1}}}`,
		`{"_foo":1}`, `[]`, `{"a":}`, `{"_rev":"x"}`, `{"_id":"_local/x","_rev":"0-3"}`,
		`{"a":{"b":[1,2,{"c":null}]},"z":"\u00e9"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseDoc(data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("ParseDoc: untyped error %v", err)
			}
			return
		}
		// What ParseDoc accepts, MarshalJSON writes back and ParseDoc reads
		// again to the same document.
		out, err := doc.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		doc2, err := ParseDoc(out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if doc.ID != doc2.ID || doc.Rev != doc2.Rev || doc.Deleted != doc2.Deleted || !bytes.Equal(doc.Body, doc2.Body) {
			t.Fatalf("round trip changed the document:\n%s\n%s", data, out)
		}
		if !reflect.DeepEqual(doc.Revisions, doc2.Revisions) {
			t.Fatalf("round trip changed _revisions: %+v vs %+v", doc.Revisions, doc2.Revisions)
		}
		if len(doc.Attachments) != len(doc2.Attachments) {
			t.Fatalf("round trip changed _attachments")
		}
	})
}
