package mobile

import (
	"strings"

	"github.com/settee/settee/couchdoc"
)

// badRequest is a CouchDB bad_request error about the app's input.
func badRequest(format string, args ...any) error {
	return couchdoc.Errorf(couchdoc.ErrBadRequest, format, args...)
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
