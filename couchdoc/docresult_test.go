package couchdoc_test

import (
	"encoding/json"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// TestDocResultReasonAnyJSON: a _bulk_docs result whose reason is not a
// string (a validate_doc_update's thrown object, as CouchDB answers it)
// is read, and written back as it came; string reasons are unchanged.
func TestDocResultReasonAnyJSON(t *testing.T) {
	for _, in := range []string{
		`{"id":"x","error":"forbidden","reason":{"nested":true}}`,
		`{"id":"z","error":"forbidden","reason":42}`,
		`{"id":"y","error":"unauthorized","reason":"log in"}`,
		`{"id":"w","rev":"1-a","ok":true}`,
	} {
		var r couchdoc.DocResult
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if r.Error != "" && r.Reason == "" {
			t.Errorf("%s: no reason text", in)
		}
		out, err := json.Marshal(r)
		if err != nil || string(out) != in {
			t.Errorf("%s written back as %s (%v)", in, out, err)
		}
	}
	var r couchdoc.DocResult
	_ = json.Unmarshal([]byte(`{"id":"x","error":"forbidden","reason":{"a":[1]}}`), &r)
	if r.Reason != `{"a":[1]}` || string(r.ReasonJSON) != `{"a":[1]}` {
		t.Errorf("object reason read as %q / %s", r.Reason, r.ReasonJSON)
	}
}
