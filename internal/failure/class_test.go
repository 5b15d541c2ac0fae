package failure

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, c := range []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, Failed},
		{"unknown", errors.New("boom"), Failed},
		{"a directory for a file", &fs.PathError{Op: "read", Path: "adir", Err: syscall.EISDIR}, Failed},
		{"a file for a directory", fmt.Errorf("keep: %w", &fs.PathError{Op: "mkdir", Path: "x", Err: syscall.ENOTDIR}), Failed},
		{"disk full", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, Failed},
		{"a closed pipe", &fs.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}, Failed},
		{"not CouchDB's answer", &wire.MalformedError{What: "answer", Foreign: true, Err: errors.New("an array")}, Failed},
		{"answer cut short", &wire.MalformedError{What: "answer", Err: io.ErrUnexpectedEOF}, Retry},
		{"digest mismatch", couchdoc.Errorf(couchdoc.ErrDigestMismatch, "x"), Failed},
		{"bad request", couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid JSON"), BadInput},
		{"illegal id", couchdoc.ErrIllegalDocID, BadInput},
		{"illegal database name", couchdoc.FromBody(400, "illegal_database_name", "Name: 'Bad'"), BadInput},
		{"too large", couchdoc.ErrTooLarge, BadInput},
		{"not found", fmt.Errorf("x: %w", couchdoc.ErrNotFound), NotFound},
		{"unauthorized", couchdoc.ErrUnauthorized, Unauthorized},
		{"forbidden", couchdoc.ErrForbidden, Unauthorized},
		{"conflict", couchdoc.ErrConflict, Conflict},
		{"refused", refused, Retry},
		{"503", couchdoc.FromBody(503, "service_unavailable", ""), Retry},
		{"file exists", couchdoc.ErrFileExists, Failed},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("%s: Classify(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}
