package scheduler

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestStripCredentials(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"source":"http://u:p@h/x","target":{"url":"https://u2:p2@h/y","auth":{"basic":{"username":"u","password":"p"}},"headers":{"Authorization":"B"}},"owner":"bob"}`,
			`{"source":"http://h/x","target":{"url":"https://h/y"},"owner":"bob"}`},
		{`{"b":1,"source":"http://h/x","target":{"url":"http://h/y"},"a":"<&>"}`, `{"b":1,"source":"http://h/x","target":{"url":"http://h/y"},"a":"<&>"}`},
		{`{"source":"http://u:p%zz@h/x"}`, `{"source":"http://h/x"}`},
		{`[]`, `[]`},
	} {
		if got := StripCredentials([]byte(c.in)); string(got) != c.want {
			t.Errorf("StripCredentials(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestSetMembers(t *testing.T) {
	got := SetMembers([]byte(`{"z":1,"_replication_state":"triggered","a":2,"_replication_state_reason":"x"}`),
		Member{Key: "_replication_state", Value: []byte(`"completed"`)}, Member{Key: "_replication_state_reason"},
		Member{Key: "_replication_stats", Value: []byte(`{"docs_written":1}`)})
	want := `{"z":1,"_replication_state":"completed","a":2,"_replication_stats":{"docs_written":1}}`
	if string(got) != want {
		t.Errorf("SetMembers = %s, want %s", got, want)
	}
}

// FuzzStripCredentials: the body shown is JSON whenever the stored one
// is an object, with the same members, and no endpoint keeps auth or
// headers.
func FuzzStripCredentials(f *testing.F) {
	for _, seed := range []string{
		`{"source":"http://u:p@h/x","target":{"url":"https://h/y","auth":{"basic":{"username":"u","password":"p"}},"headers":{"A":"b"}}}`,
		`{"source":{"url":"http://u:p@h/x"}}`, `{}`, `[]`, `{"source":1,"target":null}`, `{"a":"\u003c"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in map[string]json.RawMessage
		if json.Unmarshal(body, &in) != nil || in == nil {
			return
		}
		out := StripCredentials(body)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("StripCredentials(%s) = %s: %v", body, out, err)
		}
		if len(m) != len(in) {
			t.Fatalf("members %d, were %d: %s", len(m), len(in), out)
		}
		for _, k := range []string{"source", "target"} {
			var ep map[string]json.RawMessage
			if json.Unmarshal(m[k], &ep) == nil && (ep["auth"] != nil || ep["headers"] != nil) {
				t.Fatalf("%s keeps credentials: %s", k, out)
			}
		}
		if bytes.Equal(out, body) {
			return
		}
		var a, b map[string]any
		_ = json.Unmarshal(out, &a)
		_ = json.Unmarshal(body, &b)
		for k := range b {
			if k != "source" && k != "target" && !reflect.DeepEqual(a[k], b[k]) {
				t.Fatalf("member %s changed: %s", k, out)
			}
		}
	})
}
