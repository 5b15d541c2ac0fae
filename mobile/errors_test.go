package mobile

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestErrorCodes: each kind of failure has its code, read from the error
// and from its message alone, and the message starts with it.
func TestErrorCodes(t *testing.T) {
	d := openTest(t)
	rev := must(d.Put(`{"_id":"a"}`))
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("some other program's file, long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	closed := openTest(t)
	closed.Close()
	for _, c := range []struct {
		code string
		call func() error
	}{
		{CodeNotFound, func() error { _, err := d.Get("missing"); return err }},
		{CodeConflict, func() error { _, err := d.Put(`{"_id":"a"}`); return err }},
		{CodeBadRequest, func() error { _, err := d.Put(`{"_id":"b",`); return err }},
		{CodeIllegalDocID, func() error { _, err := d.Put(`{"_id":"_bad"}`); return err }},
		{CodeDocValidation, func() error { _, err := d.Put(`{"_id":"b","_bogus":1}`); return err }},
		{CodeClosed, func() error { _, err := closed.Get("a"); return err }},
		{CodeDatabaseOpen, func() error { return DeleteDatabase(d.Path()) }},
		{CodeNotFound, func() error { return DeleteDatabase(filepath.Join(dir, "none.db")) }},
		{CodeNotAStore, func() error { _, err := Open(foreign); return err }},
		{CodeNotAStore, func() error { return DeleteDatabase(foreign) }},
		{CodeInternal, panicky},
	} {
		err := c.call()
		if err == nil {
			t.Errorf("%s: no error", c.code)
			continue
		}
		if got := ErrorCode(err); got != c.code {
			t.Errorf("ErrorCode(%v) = %q, want %q", err, got, c.code)
		}
		if !strings.HasPrefix(err.Error(), c.code+": ") {
			t.Errorf("message %q does not start with %q", err, c.code+": ")
		}
		// What Java or Swift code holding only the message reads.
		if got := ErrorCode(errors.New(err.Error())); got != c.code {
			t.Errorf("ErrorCode of the message %q = %q, want %q", err, got, c.code)
		}
	}
	_ = rev
	if ErrorCode(nil) != "" {
		t.Error("ErrorCode(nil) is not empty")
	}
	for _, msg := range []string{"", "boom", "Conflict: capitalised", "my_code: the app's own"} {
		if got := ErrorCode(errors.New(msg)); got != CodeUnknown {
			t.Errorf("ErrorCode(%q) = %q", msg, got)
		}
	}
	// A remote server's own error name is kept.
	if got := ErrorCode(fmt.Errorf("pull: %w", withCode(badRequest("x")))); got != CodeBadRequest {
		t.Errorf("wrapped: %q", got)
	}
}

// TestErrorClass: the class of each failure says what fixes it, as the
// command line's exit codes do, and a local file error is never taken for
// the network.
func TestErrorClass(t *testing.T) {
	d := openTest(t)
	must(d.Put(`{"_id":"a"}`))
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("some other program's file, long enough"), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	isDir := &fs.PathError{Op: "read", Path: "adir", Err: syscall.EISDIR}
	for _, c := range []struct {
		class string
		call  func() error
	}{
		{"not_found", func() error { _, err := d.Get("missing"); return err }},
		{"not_found", func() error { return DeleteDatabase(filepath.Join(dir, "none.db")) }},
		{"conflict", func() error { _, err := d.Put(`{"_id":"a"}`); return err }},
		{"bad_input", func() error { _, err := d.Put(`{"_id":"b",`); return err }},
		{"bad_input", func() error { _, err := d.Put(`{"_id":"_bad"}`); return err }},
		{"failed", func() error { _, err := Open(foreign); return err }},
		{"failed", func() error { return withCode(isDir) }},
		{"retry", func() error { return withCode(refused) }},
	} {
		err := c.call()
		if got := ErrorClass(err); got != c.class {
			t.Errorf("ErrorClass(%v) = %q, want %q", err, got, c.class)
		}
	}
	if got := ErrorCode(withCode(isDir)); got == CodeNetwork {
		t.Errorf("a local file error has the code %q", got)
	}
	if ErrorClass(nil) != "" {
		t.Error("ErrorClass(nil) is not empty")
	}
}
