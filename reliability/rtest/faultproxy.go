package rtest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"
)

// Kind is a fault the HTTP proxy can inject in an answer.
type Kind string

// Fault kinds.
const (
	// Status answers with one of Plan.Statuses without asking the server.
	Status Kind = "status"
	// StatusAfter forwards the request (so writes happen), then answers
	// with one of Plan.Statuses instead of the server's answer.
	StatusAfter Kind = "status-after"
	// Garble replaces one byte of the answer's body with a NUL byte (never
	// valid JSON; a wrong attachment digest in binary parts).
	Garble Kind = "garble"
	// Cut ends the answer's body after a random number of bytes and drops
	// the connection.
	Cut Kind = "cut"
	// Hang waits Plan.HangFor (or until the client gives up) before
	// forwarding.
	Hang Kind = "hang"
	// GzipCorrupt changes one letter of a gzip-compressed answer's JSON
	// (keeping it valid JSON of the same length) and keeps the original
	// CRC-32: corruption in transit that only the gzip trailer reveals, at
	// the very end of the body. Answers that are not gzip pass unchanged.
	GzipCorrupt Kind = "gzip-corrupt"
	// Nodedown answers 412 with the body a CouchDB cluster sends while
	// shard copies a request needs are on a node that is down
	// (testdata/cluster/nodedown.json), without asking the server.
	Nodedown Kind = "nodedown"
)

// NodedownBody is the recorded body of a cluster's 412 nodedown answer.
var NodedownBody = func() []byte {
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "cluster", "nodedown.json"))
	if err != nil {
		panic(err)
	}
	return bytes.TrimSpace(b)
}()

// Plan says which faults to inject: each request gets a fault with
// probability Prob, its kind drawn from Kinds.
type Plan struct {
	Prob  float64
	Kinds []Kind
	// Statuses for Status and StatusAfter (default 500, 502, 503, 429).
	Statuses []int
	// RetryAfter adds "Retry-After: 1" to 429 and 503 answers.
	RetryAfter bool
	// HangFor bounds a Hang (default 3 s).
	HangFor time.Duration
	// Max stops injecting after this many faults (0: no limit).
	Max int
	// Paths, when set, limits the faults to requests whose path contains
	// one of these strings.
	Paths []string
}

// FaultProxy is an HTTP reverse proxy that injects faults Toxiproxy cannot
// make at the TCP level: error statuses, garbled and cut bodies.
type FaultProxy struct {
	// URL is the upstream URL with the proxy's address.
	URL string
	rp  *httputil.ReverseProxy

	mu      gosync.Mutex
	rng     *rand.Rand
	plan    Plan
	decided int // faults decided under the current plan

	// Injected counts the faults injected, by kind.
	injected gosync.Map // Kind -> *atomic.Int64

	logMu gosync.Mutex
	log   []string
}

// Requests returns the last requests seen (method, URL, start of the body),
// oldest first, for failure messages.
func (fp *FaultProxy) Requests() []string {
	fp.logMu.Lock()
	defer fp.logMu.Unlock()
	return append([]string(nil), fp.log...)
}

func (fp *FaultProxy) record(r *http.Request, d decision) {
	line := r.Method + " " + r.URL.RequestURI()
	if r.Body != nil && r.ContentLength != 0 && r.ContentLength < 64<<10 &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if len(b) > 4000 {
			b = b[:4000]
		}
		line += " " + string(b)
	}
	if d.kind != "" {
		line += " [" + string(d.kind) + "]"
	}
	fp.logMu.Lock()
	fp.log = append(fp.log, line)
	if len(fp.log) > 3000 {
		fp.log = fp.log[1000:]
	}
	fp.logMu.Unlock()
}

// NewFaultProxy starts a proxy in front of upstream (its path kept in URL),
// stopped when the test ends. Faults are drawn from a rng seeded with seed.
func NewFaultProxy(t testing.TB, upstream string, seed int64) *FaultProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	target := &url.URL{Scheme: u.Scheme, Host: u.Host}
	fp := &FaultProxy{rp: httputil.NewSingleHostReverseProxy(target), rng: rand.New(rand.NewSource(seed))}
	fp.rp.FlushInterval = -1 // stream continuous feeds
	fp.rp.ErrorLog = nil
	fp.rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		w.WriteHeader(http.StatusBadGateway)
	}
	srv := httptest.NewServer(fp)
	t.Cleanup(srv.Close)
	pu := *u
	pu.Host = strings.TrimPrefix(srv.URL, "http://")
	fp.URL = strings.TrimSuffix(pu.String(), "/")
	return fp
}

// Set replaces the plan; Plan{} turns faults off.
func (fp *FaultProxy) Set(p Plan) {
	fp.mu.Lock()
	fp.plan, fp.decided = p, 0
	fp.mu.Unlock()
}

// Injected returns the number of faults injected so far, all kinds.
func (fp *FaultProxy) Injected() int64 {
	var n int64
	fp.injected.Range(func(_, v any) bool { n += v.(*atomic.Int64).Load(); return true })
	return n
}

// InjectedBy returns the counts per kind, for messages.
func (fp *FaultProxy) InjectedBy() string {
	var parts []string
	fp.injected.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	return strings.Join(parts, " ")
}

func (fp *FaultProxy) count(k Kind) {
	v, _ := fp.injected.LoadOrStore(k, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	Count.Faults.Add(1)
}

type decision struct {
	kind   Kind
	status int
	at     int
	retry  bool
	hang   time.Duration
}

func (fp *FaultProxy) decide(r *http.Request) (d decision) {
	fp.mu.Lock()
	defer fp.mu.Unlock()
	p := fp.plan
	if p.Prob == 0 || len(p.Kinds) == 0 || (p.Max > 0 && fp.decided >= p.Max) || !pathMatches(p.Paths, r.URL.Path) || fp.rng.Float64() >= p.Prob {
		return d
	}
	fp.decided++
	d.kind = p.Kinds[fp.rng.Intn(len(p.Kinds))]
	st := p.Statuses
	if len(st) == 0 {
		st = []int{500, 502, 503, 429}
	}
	d.status = st[fp.rng.Intn(len(st))]
	d.at = fp.rng.Intn(1500)
	if fp.rng.Intn(2) == 0 {
		d.at = fp.rng.Intn(60) // small answers too
	}
	d.retry = p.RetryAfter && (d.status == 429 || d.status == 503)
	d.hang = p.HangFor
	if d.hang == 0 {
		d.hang = 3 * time.Second
	}
	// A never-ending feed cannot be answered after the fact.
	if d.kind == StatusAfter && isFeed(r) {
		d.kind = Status
	}
	return d
}

func pathMatches(paths []string, p string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, s := range paths {
		if strings.Contains(p, s) {
			return true
		}
	}
	return false
}

func isFeed(r *http.Request) bool {
	f := r.URL.Query().Get("feed")
	return f == "continuous" || f == "longpoll"
}

func (fp *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := fp.decide(r)
	fp.record(r, d)
	switch d.kind {
	case Status:
		fp.count(d.kind)
		writeStatus(w, d)
		return
	case Nodedown:
		fp.count(d.kind)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusPreconditionFailed)
		_, _ = w.Write(NodedownBody)
		return
	case StatusAfter:
		rec := &discardWriter{h: http.Header{}}
		fp.rp.ServeHTTP(rec, r)
		fp.count(d.kind)
		writeStatus(w, d)
		return
	case GzipCorrupt:
		if !isFeed(r) {
			fp.gzipCorrupt(w, r)
			return
		}
	case Hang:
		fp.count(d.kind)
		select {
		case <-time.After(d.hang):
		case <-r.Context().Done():
			return
		}
	case Garble, Cut:
		w = &faultWriter{ResponseWriter: w, fp: fp, d: d}
	}
	fp.rp.ServeHTTP(w, r)
}

func writeStatus(w http.ResponseWriter, d decision) {
	if d.retry {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(d.status)
	fmt.Fprintf(w, `{"error":"injected","reason":"fault injected by the reliability proxy (%d)"}`, d.status)
}

// faultWriter garbles or cuts the body the reverse proxy writes.
type faultWriter struct {
	http.ResponseWriter
	fp      *FaultProxy
	d       decision
	written int
	done    bool
}

func (fw *faultWriter) Write(p []byte) (int, error) {
	if fw.done && fw.d.kind == Cut {
		return 0, io.ErrUnexpectedEOF
	}
	start := fw.written
	fw.written += len(p)
	if fw.done || fw.d.at >= fw.written {
		return fw.ResponseWriter.Write(p)
	}
	i := fw.d.at - start
	fw.done = true
	fw.fp.count(fw.d.kind)
	if fw.d.kind == Garble {
		q := append([]byte(nil), p...)
		q[i] = 0
		return fw.ResponseWriter.Write(q)
	}
	fw.ResponseWriter.Write(p[:i])
	if f, ok := fw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	// Drop the connection: the client sees a truncated body.
	panic(http.ErrAbortHandler)
}

func (fw *faultWriter) Flush() {
	if f, ok := fw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// discardWriter swallows the server's answer of a StatusAfter fault.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// gzipCorrupt forwards the request, and when the answer is gzip, swaps one
// letter of its JSON for another and sends it recompressed with the
// original CRC-32 and size in the trailer.
func (fp *FaultProxy) gzipCorrupt(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	fp.rp.ServeHTTP(rec, r)
	body := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" && len(body) > 8 {
		if plain, err := gunzip(body); err == nil {
			if i := bytes.Index(plain, []byte(`"s":"`)); i >= 0 && i+5 < len(plain) {
				c := plain[i+5]
				if c >= 'a' && c < 'z' {
					plain[i+5] = c + 1
				} else {
					plain[i+5] = 'a'
				}
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write(plain)
				zw.Close()
				out := buf.Bytes()
				copy(out[len(out)-8:], body[len(body)-8:]) // the original CRC-32 and size
				body = out
				fp.count(GzipCorrupt)
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rec.Code)
	w.Write(body)
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
