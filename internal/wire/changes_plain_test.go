package wire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// TestPlainMembersAsEncodingJSON: where the fast decoders of a row's "id"
// and "changes" accept a value, they give what encoding/json gives; they
// refuse (leaving it to encoding/json) whatever they do not fully handle.
func TestPlainMembersAsEncodingJSON(t *testing.T) {
	strs := []struct {
		in    string
		plain bool
	}{
		{`"doc-1"`, true}, {`""`, true}, {`"a b/c:d"`, true},
		{`"a\"b"`, false}, {`"a\\b"`, false}, {`"\u00e9"`, false}, {`"é"`, false},
		{"\"a\tb\"", false}, {`"abc`, false}, {`abc"`, false}, {`"`, false}, {`12`, false}, {`null`, false},
	}
	for _, tc := range strs {
		got, ok := plainJSONString([]byte(tc.in))
		if ok != tc.plain {
			t.Errorf("plainJSONString(%s) ok = %v, want %v", tc.in, ok, tc.plain)
			continue
		}
		var want string
		if ok {
			if err := json.Unmarshal([]byte(tc.in), &want); err != nil || got != want {
				t.Errorf("plainJSONString(%s) = %q, encoding/json %q (%v)", tc.in, got, want, err)
			}
		}
	}
	changes := []struct {
		in    string
		plain bool
	}{
		{`[{"rev":"1-abc"}]`, true},
		{`[{"rev":"1-abc"},{"rev":"2-def"}]`, true},
		{` [ { "rev" : "1-abc" } , {"rev":"2-def"} ] `, true},
		{"[\n{\"rev\":\"1-a\"}\r\n]", true},
		{`[]`, true}, {`[ ]`, true},
		{`[{"rev":"1-a","x":1}]`, false}, {`[{"Rev":"1-a"}]`, false}, {`[{"rev":1}]`, false},
		{`[{"rev":"1-\"a"}]`, false}, {`[{"rev":"1-a"},]`, false}, {`[{"rev":"1-a"}`, false},
		{`[{"rev":"1-a"}]x`, false}, {`null`, false}, {`{}`, false}, {`[{}]`, false}, {`[{"rev":"é"}]`, false},
		{`[{"rev":null}]`, false}, {`[{"rev":"1-a"} {"rev":"2-b"}]`, false},
	}
	for _, tc := range changes {
		got, ok := plainChanges([]byte(tc.in))
		if ok != tc.plain {
			t.Errorf("plainChanges(%s) ok = %v, want %v", tc.in, ok, tc.plain)
			continue
		}
		if ok {
			var want []couchdoc.ChangeRev
			if err := json.Unmarshal([]byte(tc.in), &want); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("plainChanges(%s) = %#v, encoding/json %#v (%v)", tc.in, got, want, err)
			}
		}
	}
}

// FuzzPlainChanges: any input the fast decoder accepts decodes as with
// encoding/json.
func FuzzPlainChanges(f *testing.F) {
	for _, s := range []string{`[{"rev":"1-abc"}]`, `[]`, ` [ { "rev" : "1-a" } , {"rev":"2-b"} ] `, `[{"rev":"1-\"a"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := plainChanges(in)
		if !ok {
			return
		}
		var want []couchdoc.ChangeRev
		if err := json.Unmarshal(in, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("plainChanges(%q) = %#v, encoding/json %#v (%v)", in, got, want, err)
		}
	})
}
