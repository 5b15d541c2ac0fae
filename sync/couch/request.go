package couch

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/failure"
	"github.com/settee/settee/internal/wire"
)

// request is one logical call, possibly sent several times.
type request struct {
	method string
	path   string // escaped, relative to the database ("" = the database)
	query  url.Values
	// body is a replayable body; stream, when set, is a one-shot body
	// (never retried) of length streamLen (-1: unknown).
	body        []byte
	stream      io.Reader
	streamLen   int64
	contentType string
	accept      string
	// idle overrides Options.Timeout (longpoll and continuous feeds).
	idle time.Duration
	// header holds extra request headers (Range).
	header map[string]string
	// root makes path relative to the server root (/_session).
	root   bool
	noAuth bool
}

func (r *request) replayable() bool { return r.stream == nil }

// do sends r and returns a response with a status below 300 whose body
// must be closed. Errors are *HTTPError, *UnreachableError or the
// context's error.
func (db *DB) do(ctx context.Context, r *request) (*http.Response, error) {
	var resp *http.Response
	err := db.attempts(ctx, r, func(attempt int) (err error) {
		resp, err = db.once(ctx, r, attempt)
		return err
	})
	return resp, err
}

// attempts runs fn (one attempt at r) until it succeeds: again after a 401
// once the credentials are renewed, and, when Options.Retries is set,
// after transient failures of a replayable request with backoff (at least
// the server's Retry-After). It is the client's only retry loop.
func (db *DB) attempts(ctx context.Context, r *request, fn func(attempt int) error) error {
	authRetried := false
	for attempt := 0; ; attempt++ {
		if db.opts.Session && db.hasAuth && !r.noAuth && db.sessionCookie() == "" {
			if err := db.login(ctx); err != nil {
				return err
			}
		}
		err := fn(attempt)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %s %s: %w", db.name, r.method, db.pathOf(r), ctx.Err())
		}
		var he *HTTPError
		if errors.As(err, &he) && he.Err.Status == http.StatusUnauthorized && !authRetried && r.replayable() && !r.noAuth &&
			(db.opts.Session && db.hasAuth || db.opts.TokenFunc != nil) {
			authRetried = true
			db.setSessionCookie("")
			attempt--
			continue
		}
		if !IsRetryable(err) || attempt >= db.opts.Retries || !r.replayable() {
			return err
		}
		wait := max(backoff(attempt, db.opts.BackoffBase, db.opts.BackoffMax),
			min(failure.Delay(err), max(db.opts.BackoffMax, time.Minute)))
		db.retries.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %s %s: %w", db.name, r.method, db.pathOf(r), ctx.Err())
		case <-t.C:
		}
	}
}

// backoff is base doubled per attempt, capped at max, with full jitter over
// its upper half.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

func (db *DB) pathOf(r *request) string {
	if r.root {
		return db.rootPath() + r.path
	}
	return db.base.EscapedPath() + r.path
}

// rootPath is the server root's path (the database path's parent), without
// a trailing slash.
func (db *DB) rootPath() string {
	p := path.Dir(db.base.EscapedPath())
	if p == "/" || p == "." {
		return ""
	}
	return p
}

func (db *DB) urlOf(r *request) string {
	s := db.base.Scheme + "://" + db.base.Host + db.pathOf(r)
	if len(r.query) > 0 {
		s += "?" + r.query.Encode()
	}
	return s
}

// once sends one attempt.
func (db *DB) once(ctx context.Context, r *request, attempt int) (*http.Response, error) {
	start := time.Now()
	ev := RequestEvent{Method: r.method, Path: db.pathOf(r), Attempt: attempt}
	idle := db.opts.Timeout
	if r.idle > 0 {
		idle = r.idle
	}
	rctx, cancel := context.WithCancel(ctx)
	var timedOut atomic.Bool
	timer := time.AfterFunc(idle, func() { timedOut.Store(true); cancel() })
	fail := func(err error) (*http.Response, error) {
		timer.Stop()
		cancel()
		ev.Err, ev.Duration = err, time.Since(start)
		db.observe(ev)
		return nil, err
	}
	unreachable := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if timedOut.Load() {
			return &UnreachableError{Peer: db.name, Method: r.method, Path: ev.Path, TimedOut: true, Err: errTimeout}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL
		}
		return &UnreachableError{Peer: db.name, Method: r.method, Path: ev.Path, BadCertificate: failure.BadCertificate(err), Err: err}
	}

	var body io.Reader
	var sent *countReader
	if r.stream != nil {
		sent = &countReader{r: r.stream}
		body = sent
	} else if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(rctx, r.method, db.urlOf(r), body)
	if err != nil {
		return fail(fmt.Errorf("%s: build request: %w", db.name, redactURLError(err)))
	}
	if r.stream != nil {
		req.ContentLength = r.streamLen
		if r.streamLen == 0 {
			req.Body = http.NoBody
		}
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", db.opts.UserAgent)
	// Never gzip: Go's transport checks a gzip body's CRC-32 only after
	// its last byte, while the streaming parsers hand out rows and
	// documents (and the replicator writes them) as they decode. A body
	// corrupted in transit would be acted upon before the checksum error,
	// which drainClose would then swallow (reliability/faults
	// TestGzipCorruptionNotApplied). A compressed longpoll or continuous
	// feed would also hold back heartbeats and rows. CouchDB does not
	// compress its answers anyway.
	req.Header.Set("Accept-Encoding", "identity")
	for k, v := range db.opts.Headers {
		req.Header.Set(k, v)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	if !r.noAuth {
		if err := db.authorize(ctx, req); err != nil {
			return fail(err)
		}
	}
	db.requests.Add(1)
	resp, err := db.client.Do(req)
	if r.body != nil {
		ev.BytesSent = int64(len(r.body))
	} else if sent != nil {
		ev.BytesSent = sent.n.Load()
	}
	db.sent.Add(ev.BytesSent)
	if err != nil {
		return fail(unreachable(err))
	}
	timer.Stop()
	ev.Status = resp.StatusCode
	db.keepSessionCookie(resp)
	if resp.StatusCode >= 300 {
		timer.Reset(idle)
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		ev.BytesReceived = int64(len(b))
		db.received.Add(ev.BytesReceived)
		if rerr != nil && resp.StatusCode < 500 {
			return fail(unreachable(rerr))
		}
		ce := wire.ParseError(resp.StatusCode, b)
		if resp.StatusCode < 400 {
			ce = &couchdoc.Error{Status: resp.StatusCode, Name: "unexpected_redirect", Reason: "redirected to " + resp.Header.Get("Location")}
		}
		if (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && !r.noAuth {
			db.noteRefused(req)
		}
		return fail(&HTTPError{Peer: db.name, Method: r.method, Path: ev.Path, RetryAfter: retryAfter(resp.Header.Get("Retry-After")), Err: ce})
	}
	resp.Body = &respBody{rc: resp.Body, db: db, timer: timer, idle: idle, cancel: cancel, timedOut: &timedOut,
		unreachable: unreachable, ev: ev, start: start}
	return resp, nil
}

func (db *DB) observe(ev RequestEvent) {
	if db.opts.Observer != nil {
		db.opts.Observer(ev)
	}
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// respBody enforces the idle timeout while a body is read, classifies its
// read errors, counts its bytes and reports the request when closed.
type respBody struct {
	rc          io.ReadCloser
	db          *DB
	timer       *time.Timer
	idle        time.Duration
	cancel      context.CancelFunc
	timedOut    *atomic.Bool
	unreachable func(error) error
	ev          RequestEvent
	start       time.Time
	closed      bool
}

func (b *respBody) Read(p []byte) (int, error) {
	b.timer.Reset(b.idle)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	b.ev.BytesReceived += int64(n)
	b.db.received.Add(int64(n))
	if err != nil && err != io.EOF {
		err = b.unreachable(err)
		if b.ev.Err == nil {
			b.ev.Err = err
		}
	}
	return n, err
}

func (b *respBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel()
	b.ev.Duration = time.Since(b.start)
	b.db.observe(b.ev)
	return err
}

type countReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// authorize sets the request's credentials.
func (db *DB) authorize(ctx context.Context, req *http.Request) error {
	switch {
	case db.opts.TokenFunc != nil:
		tok, err := db.opts.TokenFunc(ctx)
		if err != nil {
			return fmt.Errorf("%s: get bearer token: %w", db.name, err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	case db.opts.BearerToken != "":
		req.Header.Set("Authorization", "Bearer "+db.opts.BearerToken)
	case db.opts.Session && db.hasAuth:
		if c := db.sessionCookie(); c != "" {
			req.Header.Set("Cookie", "AuthSession="+c)
		}
	case db.hasAuth:
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(db.user+":"+db.pass)))
	}
	return nil
}

func (db *DB) sessionCookie() string {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.cookie
}

func (db *DB) setSessionCookie(c string) {
	db.mu.Lock()
	db.cookie = c
	db.mu.Unlock()
}

// keepSessionCookie stores a refreshed AuthSession cookie.
func (db *DB) keepSessionCookie(resp *http.Response) {
	if !db.opts.Session {
		return
	}
	for _, c := range resp.Cookies() {
		if c.Name == "AuthSession" && c.Value != "" {
			db.setSessionCookie(c.Value)
		}
	}
}

// login opens a cookie session with POST /_session.
func (db *DB) login(ctx context.Context) error {
	body, _ := json.Marshal(map[string]string{"name": db.user, "password": db.pass})
	resp, err := db.once(ctx, &request{method: http.MethodPost, path: "/_session", root: true, noAuth: true,
		body: body, contentType: "application/json"}, 0)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if db.sessionCookie() == "" {
		return &HTTPError{Peer: db.name, Method: http.MethodPost, Path: db.rootPath() + "/_session",
			Err: couchdoc.Errorf(couchdoc.ErrUnauthorized, "no AuthSession cookie in the _session answer")}
	}
	return nil
}

// drainClose reads what is left of a fully parsed answer (a trailing
// newline, the end of the chunked encoding) so that the connection goes
// back to the keep-alive pool, then closes it. Never call it on a feed
// that is still streaming.
func drainClose(body io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, body, 64<<10)
	body.Close()
}
