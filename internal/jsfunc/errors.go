package jsfunc

import (
	"encoding/json"
	"net/http"

	"github.com/settee/settee/couchdoc"
)

// queryServerRef is the ref CouchDB 3.5 gives errors of its query servers.
const queryServerRef = 270952464

// Errors of the runtime, matched with errors.Is.
var (
	// ErrTimeout: a call ran past the time limit (CouchDB's os_process_timeout).
	ErrTimeout = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "os_process_error", Reason: "OS process timed out.", Ref: queryServerRef}
	// ErrMemory: the runtime ran out of its memory cap.
	ErrMemory = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "os_process_error", Reason: "out of memory"}
	// ErrCompilation: a stored function's source is not a JavaScript
	// function (a 500, as CouchDB answers a request that runs it).
	ErrCompilation = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "compilation_error", Reason: "Expression does not eval to a function."}
	// ErrClosed: the runtime was closed (after a timeout, an out-of-memory or Close).
	ErrClosed = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "os_process_error", Reason: "runtime closed"}
)

// thrown is what an entry point of sandbox.js answers: ok, or the thrown
// value as {error, reason}; log holds the log() lines of the call.
type thrown struct {
	OK     json.RawMessage `json:"ok"`
	Error  string          `json:"error"`
	Reason json.RawMessage `json:"reason"`
	Log    []string        `json:"log"`
}

// err returns the thrown value as CouchDB answers it: forbidden and
// unauthorized keep their statuses (403, 401), a compilation error is
// ErrCompilation's, anything else a 500 named as thrown.
func (t *thrown) err() error {
	reason := string(t.Reason)
	var s string
	var asJSON json.RawMessage // a reason that is not a string, answered as it is
	if json.Unmarshal(t.Reason, &s) == nil {
		reason = s
	} else if len(t.Reason) > 0 {
		asJSON = t.Reason
	}
	switch t.Error {
	case "forbidden", "unauthorized":
		kind := couchdoc.ErrForbidden
		if t.Error == "unauthorized" {
			kind = couchdoc.ErrUnauthorized
		}
		e := couchdoc.Errorf(kind, "%s", reason)
		e.ReasonJSON = asJSON
		return e
	case "compilation_error":
		return couchdoc.Errorf(ErrCompilation, "%s", reason)
	}
	return &couchdoc.Error{Status: http.StatusInternalServerError, Name: t.Error, Reason: reason}
}
