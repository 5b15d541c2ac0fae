package wire

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// ErrorBody is CouchDB's error body {"error": name, "reason": text}.
type ErrorBody struct {
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// Err returns the body as a *couchdoc.Error with the given HTTP status (0:
// inferred from the name).
func (b ErrorBody) Err(status int) *couchdoc.Error {
	return couchdoc.FromBody(status, b.Error, b.Reason)
}

// ParseError turns an error response (status >= 400) into a
// *couchdoc.Error. A body that is not CouchDB's error JSON (a proxy's HTML
// page, an empty body) still gives an error with the status and a name
// derived from it.
func ParseError(status int, body []byte) *couchdoc.Error {
	var b ErrorBody
	if err := json.Unmarshal(body, &b); err == nil && b.Error != "" {
		return b.Err(status)
	}
	name := strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	if name == "" {
		name = "unknown_error"
	}
	switch status {
	case http.StatusNotFound:
		name = "not_found"
	case http.StatusUnauthorized:
		name = "unauthorized"
	case http.StatusForbidden:
		name = "forbidden"
	case http.StatusBadRequest:
		name = "bad_request"
	}
	reason := strings.TrimSpace(string(body))
	if len(reason) > 200 {
		reason = reason[:200] + "..."
	}
	return couchdoc.FromBody(status, name, reason)
}
