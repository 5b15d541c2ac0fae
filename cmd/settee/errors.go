package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	gosync "sync"
	"syscall"

	"github.com/settee/settee/internal/failure"
	"github.com/settee/settee/localdb"
)

// Exit codes. Scripts can tell these failures apart without reading the
// message.
const (
	exitOK          = 0
	exitFailure     = 1   // anything no retry, argument or credential fixes (failure.Failed)
	exitUsage       = 2   // bad flags or arguments (failure.BadInput)
	exitTransient   = 3   // unreachable (refused, DNS, TLS, timeout) or failing for now (5xx, nodedown, garbled)
	exitAuth        = 4   // unauthorized or forbidden
	exitNotFound    = 5   // database or document not found
	exitConflict    = 6   // document update conflict
	exitWrongKey    = 7   // an encrypted store without its key, or a key for a plain one
	exitInterrupted = 130 // stopped by Ctrl-C or SIGTERM (checkpoint written)
)

// exitMeaning words each exit code for the help texts.
var exitMeaning = map[int]string{
	exitOK:          "done",
	exitFailure:     "failed, and running it again will not help (a local file error, a URL that\n       is not a CouchDB database, ...)",
	exitUsage:       "bad flags or arguments (malformed JSON, an illegal name or id)",
	exitTransient:   "remote unreachable or failing for now (connection refused, DNS, TLS, timeout,\n       5xx, 429, a cluster's 412 nodedown, a garbled answer) after --retries\n       attempts: run the same command again to resume",
	exitAuth:        "unauthorized or forbidden (check the user and password)",
	exitNotFound:    "no local store at the path, or database or document not found",
	exitConflict:    "document update conflict",
	exitWrongKey:    "wrong key, or no key, for an encrypted store (--key-file, $SETTEE_KEY_FILE),\n       or a key for a store that is not encrypted",
	exitInterrupted: "interrupted by Ctrl-C or SIGTERM (replications write a checkpoint first)",
}

// exitCodesOf is the "Exit codes:" section listing codes.
func exitCodesOf(codes []int) string {
	var b strings.Builder
	b.WriteString("Exit codes:")
	for _, c := range codes {
		fmt.Fprintf(&b, "\n  %-4d %s", c, exitMeaning[c])
	}
	return b.String()
}

// exitCodesHelp lists every exit code, for "settee help".
var exitCodesHelp = exitCodesOf([]int{exitOK, exitFailure, exitUsage, exitTransient, exitAuth, exitNotFound, exitConflict, exitWrongKey, exitInterrupted})

// errUsage is returned after the usage text was already printed.
var errUsage = &exitError{code: exitUsage}

// exitError carries an exit code and, optionally, a message that replaces
// the wrapped error's text.
type exitError struct {
	code int
	msg  string
	err  error
	own  bool // msg names the command itself ("settee pull: ..."): no "settee: " prefix
}

func (e *exitError) Error() string {
	switch {
	case e.msg != "":
		return e.msg
	case e.err != nil:
		return e.err.Error()
	}
	return fmt.Sprintf("exit status %d", e.code)
}

func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

// report prints err as one line on stderr and returns the exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage && ee.msg == "" && ee.err == nil {
		return code // usage already printed
	}
	msg := oneLine(scrub(err.Error()))
	if isDamaged(err) {
		msg += damagedHint(err)
	}
	if code == exitUsage && !strings.Contains(msg, "help") {
		msg += " (see --help)"
	}
	if errors.As(err, &ee) && ee.own {
		fmt.Fprintln(stderr, msg)
		return code
	}
	fmt.Fprintf(stderr, "settee: %s\n", msg)
	return code
}

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.code != 0 {
		return ee.code
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	if isKeyError(err) {
		return exitWrongKey
	}
	return classExit[failure.Classify(err)]
}

// classExit is the exit code of each class of failure: what a retry, new
// arguments or new credentials can fix.
var classExit = map[failure.Class]int{
	failure.Failed:       exitFailure,
	failure.BadInput:     exitUsage,
	failure.NotFound:     exitNotFound,
	failure.Unauthorized: exitAuth,
	failure.Conflict:     exitConflict,
	failure.Retry:        exitTransient,
}

// unreachableReason gives the short network reason of err ("connection
// refused", "no such host", ...), or "" when err is not a network error.
func unreachableReason(err error) string {
	var (
		dns     *net.DNSError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		inval   x509.CertificateInvalidError
		ne      net.Error
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.As(err, &dns):
		return "no such host " + dns.Name
	case errors.As(err, &unknown):
		return "TLS certificate signed by an unknown authority (use --ca-file, or --insecure for testing)"
	case errors.As(err, &host):
		return "TLS " + host.Error()
	case errors.As(err, &inval):
		return "TLS " + inval.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out (see --timeout)"
	}
	return ""
}

// secrets are strings never to print: passwords read from flags, files or
// the environment. scrub replaces them in every message.
var secrets struct {
	gosync.Mutex
	list []string
}

func addSecret(s string) {
	if s == "" {
		return
	}
	secrets.Lock()
	secrets.list = append(secrets.list, s)
	secrets.Unlock()
}

var userinfoRE = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)([^/@\s"]*)@`)

// scrub removes credentials from s: the user info of any URL and any known
// secret.
func scrub(s string) string {
	s = userinfoRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfoRE.FindStringSubmatch(m)
		user, _, _ := strings.Cut(sub[2], ":")
		return sub[1] + user + "@"
	})
	secrets.Lock()
	defer secrets.Unlock()
	for _, p := range secrets.list {
		s = strings.ReplaceAll(s, p, "***")
	}
	return s
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// damagedHint is the next step after an error that found the store's file
// damaged.
func damagedHint(err error) string {
	path := "LOCAL.db"
	var oe *localdb.OpenError
	if errors.As(err, &oe) {
		path = oe.Path
	}
	return fmt.Sprintf(" (the store file is damaged: settee check %s says which documents can still be read; a new pull rebuilds what the server has)", path)
}
