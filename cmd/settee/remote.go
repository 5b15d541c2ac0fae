package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// remoteFlags are the connection flags of pull, push and sync.
type remoteFlags struct {
	user         string
	passwordFile string
	caFile       string
	insecure     bool
	timeout      time.Duration
}

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.user, "user", "", "user `name` (default: from the URL, else $SETTEE_USER)")
	fs.StringVar(&f.passwordFile, "password-file", "", "read the password from this `file` (- for stdin; default: from the URL, else $SETTEE_PASSWORD)")
	fs.StringVar(&f.caFile, "ca-file", "", "trust the CA certificates in this PEM `file` (on top of the system's)")
	fs.BoolVar(&f.insecure, "insecure", false, "skip TLS certificate verification (testing only; prints a warning)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "how long to wait to connect and for each answer")
}

// remote is a database URL with its credentials taken out, and the
// connection settings of the flags.
type remote struct {
	// URL has no user info: it is safe to print.
	URL      *url.URL
	User     string
	password string
	flags    remoteFlags
	retries  int // couch.Options.Retries
}

// String returns the URL without credentials.
func (r *remote) String() string { return r.URL.String() }

// newRemote parses rawURL and resolves the credentials: --user and
// --password-file first, then the URL's user info, then $SETTEE_USER and
// $SETTEE_PASSWORD. Passwords are registered as secrets so no message
// prints them.
func newRemote(rawURL string, f *remoteFlags, stderr io.Writer) (*remote, error) {
	u, err := parseDBURL(rawURL)
	if err != nil {
		return nil, err
	}
	var user, pwd string
	var pwdSet bool
	if u.User != nil {
		user = u.User.Username()
		pwd, pwdSet = u.User.Password()
		u.User = nil
	}
	if user == "" {
		user = os.Getenv("SETTEE_USER")
	}
	if f.user != "" {
		user = f.user
	}
	if !pwdSet {
		pwd, pwdSet = os.LookupEnv("SETTEE_PASSWORD")
	}
	if f.passwordFile != "" {
		if pwd, err = readPassword(f.passwordFile); err != nil {
			return nil, err
		}
		pwdSet = true
	}
	addSecret(pwd)
	if user == "" && pwdSet && pwd != "" {
		return nil, usageErrorf("a password was given without a user name (--user or $SETTEE_USER)")
	}
	if user != "" && !pwdSet {
		return nil, usageErrorf("no password for user %q: use --password-file, $SETTEE_PASSWORD or the URL", user)
	}
	if f.caFile != "" {
		if _, err := os.Stat(f.caFile); err != nil {
			return nil, usageErrorf("--ca-file: %v", err)
		}
	}
	if f.insecure {
		fmt.Fprintf(stderr, "settee: warning: --insecure: the TLS certificate of %s is NOT verified\n", u.Host)
	}
	if user != "" && u.Scheme == "http" && !isLoopback(u.Hostname()) {
		fmt.Fprintf(stderr, "settee: warning: sending the password of %q unencrypted (http) to %s\n", user, u.Host)
	}
	return &remote{URL: u, User: user, password: pwd, flags: *f}, nil
}

// parseDBURL checks that rawURL names a database on an http(s) server.
// The result keeps the URL's user info.
func parseDBURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErrorf("%q is not an http:// or https:// database URL", scrub(rawURL))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, usageErrorf("%s: port %s is not between 1 and 65535", scrub(rawURL), p)
		}
	}
	if strings.Trim(u.Path, "/") == "" {
		return nil, usageErrorf("%s names no database (expected http://host:port/DBNAME)", scrub(rawURL))
	}
	return u, nil
}

func readPassword(path string) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, 4096))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", usageErrorf("--password-file: %v", err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
