package mobile

import (
	"fmt"
	"runtime/debug"
)

// recoverTo turns a panic in an entry point into an error stored in *err,
// because a panic crossing the gomobile boundary kills the app, and gives
// *err its code (withCode). Use it as the first deferred call of every
// exported function or method that returns an error:
//
//	defer recoverTo(&err)
func recoverTo(err *error) {
	if r := recover(); r != nil {
		*err = &codedError{code: CodeInternal, err: fmt.Errorf("settee: internal error: %v", r)}
		logf(LevelError, "panic recovered: %v\n%s", r, debug.Stack())
	}
	*err = withCode(*err)
}

// recoverLog is recoverTo for entry points that return no error: the panic
// is logged and swallowed.
func recoverLog(where string) {
	if r := recover(); r != nil {
		logf(LevelError, "panic recovered in %s: %v\n%s", where, r, debug.Stack())
	}
}
