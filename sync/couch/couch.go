package couch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/settee/settee/sync"
)

var (
	_ sync.Peer       = (*DB)(nil)
	_ sync.BulkGetter = (*DB)(nil)
	_ sync.Creator    = (*DB)(nil)
)

// Options configure a DB. The zero value (or nil) is usable.
type Options struct {
	// Username and Password for basic auth (or for the cookie session).
	// Userinfo in the URL is used when these are empty.
	Username, Password string
	// Session logs in with POST /_session and sends the AuthSession cookie
	// instead of basic auth; the session is renewed on a 401.
	Session bool
	// BearerToken is sent as "Authorization: Bearer ..."; TokenFunc, when
	// set, is asked for the token before each request and again after a 401.
	BearerToken string
	TokenFunc   func(ctx context.Context) (string, error)
	// Headers are added to every request.
	Headers map[string]string
	// CAFile adds PEM certificates to the system roots. InsecureSkipVerify
	// turns off certificate checks (tests only).
	CAFile             string
	InsecureSkipVerify bool
	// Timeout bounds the wait for response headers and every silence while
	// reading a body (default 60s). Longpoll and continuous feeds extend it
	// by their heartbeat or timeout.
	Timeout time.Duration
	// Retries is the number of retries of a failed replayable request
	// that IsRetryable reports (default 0: none; leave it so under a
	// replicator, which retries each step itself). Backoff doubles from
	// BackoffBase (default 250ms) up to BackoffMax (default 10s), with
	// jitter; a longer Retry-After wins (up to a minute).
	Retries                 int
	BackoffBase, BackoffMax time.Duration
	// UserAgent (default "settee").
	UserAgent string
	// Observer, when set, hears about every HTTP request (each attempt)
	// once it is done. It is called from the requesting goroutines, so it
	// must be safe for concurrent use.
	Observer func(RequestEvent)
	// Transport replaces the tuned default transport (tests).
	Transport http.RoundTripper
}

// RequestEvent describes one HTTP request (one attempt). It holds no
// credentials.
type RequestEvent struct {
	Method string
	Path   string // escaped path, without the query
	Status int    // 0 when no answer arrived
	// BytesSent and BytesReceived count bodies (after gzip decoding).
	BytesSent, BytesReceived int64
	Duration                 time.Duration
	Attempt                  int // 0 for the first try
	Err                      error
}

// Stats are the totals of a DB's requests.
type Stats struct {
	Requests, Retries, BytesSent, BytesReceived int64
}

// DB is one CouchDB database. It is safe for concurrent use.
type DB struct {
	base    *url.URL // without userinfo; Path is the database path
	name    string   // String()
	opts    Options
	user    string
	pass    string
	hasAuth bool
	client  *http.Client

	mu      gosync.Mutex
	cookie  string // AuthSession cookie of the session
	refused string // credentialKey of the last request refused with 401/403

	requests, retries, sent, received atomic.Int64
}

// New returns a client for the database at rawURL, such as
// https://user:pass@host:6984/mydb. It does no I/O.
func New(rawURL string, opts *Options) (*DB, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("couch: bad database URL: %w", redactURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("couch: database URL must be http(s)://host/db, got scheme %q", u.Scheme)
	}
	db := &DB{}
	if opts != nil {
		db.opts = *opts
	}
	o := &db.opts
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	o.Retries = max(o.Retries, 0)
	if o.BackoffBase <= 0 {
		o.BackoffBase = 250 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 10 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = "settee"
	}
	db.user, db.pass = o.Username, o.Password
	if u.User != nil && db.user == "" {
		db.user = u.User.Username()
		db.pass, _ = u.User.Password()
	}
	db.hasAuth = db.user != ""
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = strings.TrimSuffix(u.RawPath, "/")
	if u.Path == "" {
		return nil, fmt.Errorf("couch: database URL %s names no database", u)
	}
	db.base = u
	db.name = u.String()
	rt := o.Transport
	if rt == nil {
		t, err := NewTransport(o)
		if err != nil {
			return nil, err
		}
		rt = t
	}
	db.client = &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return db, nil
}

// NewTransport returns the transport New uses when Options.Transport is
// nil (pool sizes, timeouts, TLS from o, 64-KB connection buffers): a base
// for a program that wraps it, to count or trace connections.
func NewTransport(o *Options) (*http.Transport, error) {
	if o == nil {
		o = &Options{}
	}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("couch: read CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("couch: CA file %s holds no PEM certificate", o.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		TLSClientConfig:       tlsConf,
		ReadBufferSize:        connBufferSize,
		WriteBufferSize:       connBufferSize,
	}, nil
}

// connBufferSize is the read and write buffer of each connection: a
// replication streams hundreds of MB each way, and net/http's default 4 KB
// made a system call of every 4 KB.
const connBufferSize = 64 << 10

// redactURLError keeps url.Parse errors from echoing the URL (and its
// password).
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// String returns the database URL without credentials.
func (db *DB) String() string { return db.name }

// Stats returns the totals of the requests made so far.
func (db *DB) Stats() Stats {
	return Stats{Requests: db.requests.Load(), Retries: db.retries.Load(), BytesSent: db.sent.Load(), BytesReceived: db.received.Load()}
}

// CloseIdleConnections closes the pooled keep-alive connections.
func (db *DB) CloseIdleConnections() { db.client.CloseIdleConnections() }
