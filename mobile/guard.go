package mobile

import (
	"fmt"
	"runtime/debug"
)

// recoverTo turns a panic in an entry point into an error stored in *err,
// because a panic crossing the gomobile boundary kills the app. Use it as
// the first deferred call of every exported function or method:
//
//	defer recoverTo(&err)
func recoverTo(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("settee: internal error: %v", r)
		logf(LevelError, "panic recovered: %v\n%s", r, debug.Stack())
	}
}

// recoverLog is recoverTo for entry points that return no error: the panic
// is logged and swallowed.
func recoverLog(where string) {
	if r := recover(); r != nil {
		logf(LevelError, "panic recovered in %s: %v\n%s", where, r, debug.Stack())
	}
}
