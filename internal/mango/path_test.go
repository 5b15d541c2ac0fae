package mango

import (
	"reflect"
	"testing"
)

// SplitPath follows CouchDB 3.5.0's mango_util:parse_field (and its own
// eunit cases): split at dots not preceded by a backslash, then drop
// every backslash.
func TestSplitPath(t *testing.T) {
	for in, want := range map[string][]string{
		`ab`: {"ab"}, `a.b`: {"a", "b"}, `a\.b`: {"a.b"}, `a.b.c`: {"a", "b", "c"}, `a.b\.c`: {"a", "b.c"},
		`\$foobar`: {"$foobar"}, `a\b`: {"ab"}, `a\\.b`: {"a.b"}, `a\`: {"a"}, `foo.bar.0foobar`: {"foo", "bar", "0foobar"},
	} {
		if got := SplitPath(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitPath(%q) = %q, want %q", in, got, want)
		}
	}
}
