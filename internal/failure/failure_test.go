package failure

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

type decides bool

func (d decides) Error() string   { return "decides" }
func (d decides) Transient() bool { return bool(d) }

type waits time.Duration

func (w waits) Error() string             { return "busy" }
func (w waits) RetryDelay() time.Duration { return time.Duration(w) }
func (w waits) Unwrap() error             { return couchdoc.FromBody(503, "service_unavailable", "") }

func TestClassification(t *testing.T) {
	dns := &net.DNSError{Err: "no such host", Name: "nowhere.invalid"}
	for _, c := range []struct {
		name                   string
		err                    error
		transient, unreachable bool
	}{
		{"nil", nil, false, false},
		{"unknown error", errors.New("the peer cannot create databases"), false, false},
		{"wrapped unknown", fmt.Errorf("target: create: %w", errors.New("x")), false, false},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), false, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true, true},
		{"500", couchdoc.FromBody(500, "unknown_error", ""), true, false},
		{"503", couchdoc.FromBody(503, "service_unavailable", ""), true, false},
		{"429", couchdoc.FromBody(429, "too_many_requests", ""), true, false},
		{"408", couchdoc.FromBody(408, "request_timeout", ""), true, false},
		{"400", couchdoc.Errorf(couchdoc.ErrBadRequest, "x"), false, false},
		{"401", couchdoc.ErrUnauthorized, false, false},
		{"403", couchdoc.ErrForbidden, false, false},
		{"404", couchdoc.ErrNotFound, false, false},
		{"409", couchdoc.ErrConflict, false, false},
		{"412", couchdoc.ErrFileExists, false, false},
		{"412 nodedown", couchdoc.FromBody(412, "nodedown", "progress not possible"), true, false},
		{"412 nodedown, maintenance mode", fmt.Errorf("x: %w", couchdoc.FromBody(412, "nodedown", "n2@127.0.0.1")), true, false},
		{"500 nodedown (a worker's node died)", couchdoc.FromBody(500, "nodedown", "progress not possible"), true, false},
		{"500 no shards", couchdoc.FromBody(500, "internal_server_error", "No DB shards could be opened."), true, false},
		{"412 missing_stub", couchdoc.FromBody(412, "missing_stub", "x"), false, false},
		{"500 timeout", couchdoc.FromBody(500, "timeout", "The request could not be processed in a reasonable amount of time."), true, false},
		{"500 write_quorum_not_met", couchdoc.FromBody(500, "write_quorum_not_met", ""), true, false},
		{"503 all workers died", couchdoc.FromBody(503, "service unavailable", "Nodes are unable to service this request due to overloading or maintenance mode."), true, false},
		{"digest mismatch", couchdoc.Errorf(couchdoc.ErrDigestMismatch, "x"), false, false},
		{"garbled answer", &wire.MalformedError{What: "answer", Err: errors.New("bad json")}, true, false},
		{"cut body", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, false},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true, true},
		{"reset", fmt.Errorf("x: %w", syscall.ECONNRESET), true, true},
		{"dns", dns, true, true},
		{"url error", &url.Error{Op: "Get", URL: "http://x", Err: dns}, true, true},
		{"untrusted certificate", &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, false, true},
		{"decides yes", decides(true), true, false},
		{"decides no", fmt.Errorf("x: %w", decides(false)), false, false},
	} {
		if got := Transient(c.err); got != c.transient {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.transient)
		}
		if got := Unreachable(c.err); got != c.unreachable {
			t.Errorf("%s: Unreachable(%v) = %v, want %v", c.name, c.err, got, c.unreachable)
		}
	}
	for _, c := range []struct {
		err  error
		auth bool
	}{
		{couchdoc.ErrUnauthorized, true},
		{fmt.Errorf("x: %w", couchdoc.ErrForbidden), true},
		{couchdoc.FromBody(403, "forbidden", "You are not allowed to access this db."), true},
		{couchdoc.ErrNotFound, false},
		{couchdoc.FromBody(412, "nodedown", "progress not possible"), false},
		{errors.New("x"), false},
		{nil, false},
	} {
		if got := Auth(c.err); got != c.auth {
			t.Errorf("Auth(%v) = %v, want %v", c.err, got, c.auth)
		}
	}
	if d := Delay(fmt.Errorf("x: %w", waits(3*time.Second))); d != 3*time.Second {
		t.Errorf("Delay = %v, want 3s", d)
	}
	if d := Delay(errors.New("x")); d != 0 {
		t.Errorf("Delay of an error without Retry-After = %v", d)
	}
}
