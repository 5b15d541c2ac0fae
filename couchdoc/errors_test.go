package couchdoc

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// TestErrorIdentity: each sentinel is its own identity, even where two
// share a wire name and status (ErrDigestMismatch and ErrBadRequest are
// both 400 bad_request).
func TestErrorIdentity(t *testing.T) {
	digest := Errorf(ErrDigestMismatch, "attachment %q: md5 digest mismatch", "a")
	bad := Errorf(ErrBadRequest, "invalid JSON")
	wireBad := FromBody(http.StatusBadRequest, "bad_request", "nope")
	wrapped := fmt.Errorf("put: %w", digest)
	for _, c := range []struct {
		name   string
		err    error
		target *Error
		want   bool
	}{
		{"digest is digest", digest, ErrDigestMismatch, true},
		{"wrapped digest is digest", wrapped, ErrDigestMismatch, true},
		{"sentinel is itself", ErrDigestMismatch, ErrDigestMismatch, true},
		{"bad request is not digest", bad, ErrDigestMismatch, false},
		{"digest is not bad request", digest, ErrBadRequest, false},
		{"peer's bad_request is not digest", wireBad, ErrDigestMismatch, false},
		{"peer's bad_request is bad request", wireBad, ErrBadRequest, true},
		{"peer's not_found", FromBody(404, "not_found", "deleted"), ErrNotFound, true},
		{"name inferred status", FromBody(0, "conflict", ""), ErrConflict, true},
		{"same name other status", FromBody(500, "not_found", ""), ErrNotFound, false},
		{"doc_validation is not bad request", Errorf(ErrDocValidation, "x"), ErrBadRequest, false},
		{"unknown name", FromBody(400, "illegal_docid", ""), ErrBadRequest, false},
		{"ad-hoc error matches no sentinel", &Error{Status: 404, Name: "not_found"}, ErrNotFound, false},
	} {
		if got := errors.Is(c.err, c.target); got != c.want {
			t.Errorf("%s: errors.Is(%v, %v) = %v, want %v", c.name, c.err, c.target, got, c.want)
		}
	}
	if StatusOf(digest) != http.StatusBadRequest || digest.Name != "bad_request" {
		t.Errorf("digest mismatch answers %d %s, want 400 bad_request", StatusOf(digest), digest.Name)
	}
	if e := FromBody(0, "whatever", ""); e.Status != http.StatusInternalServerError {
		t.Errorf("unknown name: status %d, want 500", e.Status)
	}
}
