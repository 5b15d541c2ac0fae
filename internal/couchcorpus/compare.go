package couchcorpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Response is the replaying server's answer to one exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Request is the method and URL sent, for messages.
	Request string
}

// Options are the normalizations a comparison applies beyond the volatile
// fields, each one a deliberate difference its caller has to name.
type Options struct {
	// IdentityAttachments: the server stores attachments as sent, where
	// CouchDB gzips compressible types (text/*, JSON ...) on write. Then
	// CouchDB's "encoding", "encoded_length" and digest of a gzip-stored
	// attachment are not compared, its gzip bodies are compared decoded,
	// and its "Accept-Ranges: none" is not required.
	IdentityAttachments bool
	// OwnBadRequestReasons: the reason of a 400 bad_request is the
	// server's own diagnostic (CouchDB's are often generic, such as
	// "invalid UTF-8 JSON"); its status and error name must still match.
	OwnBadRequestReasons bool
	// FloatTolerance, when > 0, is the relative difference under which two
	// numbers compare equal: sums of floats depend on the order they were
	// added in, which for CouchDB's reductions is the shape of its B-tree.
	FloatTolerance float64
}

// comparedHeaders are the answer headers that must match (besides
// Content-Type, compared by media type and parameters). Framing,
// Cache-Control and Server-identifying headers are not behaviour.
var comparedHeaders = []string{"Content-Encoding", "Accept-Ranges", "Content-Range", "Content-Security-Policy", "Location", "ETag"}

// Compare lists how got differs from CouchDB's answer in e, after
// normalizing what the corpus README calls volatile. An empty list means
// the same answer.
func Compare(e *Exchange, got *Response, m *Mapper, opts Options) []string {
	c := &comparer{m: m, opts: opts}
	if e.Status != got.Status {
		c.addf("status %d, CouchDB %d", got.Status, e.Status)
	}
	gzipped := strings.EqualFold(e.RespHeader("Content-Encoding"), "gzip") ||
		(e.Status/100 == 2 && Compressible(e.RespHeader("Content-Type")) && e.RespHeader("Content-Security-Policy") != "")
	for _, h := range comparedHeaders {
		want, have := e.RespHeader(h), got.Header.Get(h)
		if opts.IdentityAttachments && gzipped && (h == "Content-Encoding" || h == "Accept-Ranges" || h == "ETag") {
			continue
		}
		c.header(h, want, have)
	}
	wantCT, haveCT := e.RespHeader("Content-Type"), got.Header.Get("Content-Type")
	c.contentType("Content-Type", wantCT, haveCT)
	if e.Method == http.MethodHead || e.Incomplete {
		return c.diffs
	}
	want := e.ResponseBody()
	if opts.IdentityAttachments && strings.EqualFold(e.RespHeader("Content-Encoding"), "gzip") {
		want = gunzip(want)
	}
	c.badRequest = opts.OwnBadRequestReasons && e.Status == http.StatusBadRequest
	c.body("body", wantCT, want, haveCT, got.Body, e.IsFeed())
	return c.diffs
}

type comparer struct {
	m          *Mapper
	opts       Options
	badRequest bool // a 400 answer whose reason is not compared
	diffs      []string
}

func (c *comparer) addf(format string, args ...any) {
	c.diffs = append(c.diffs, fmt.Sprintf(format, args...))
}

var quotedRev = regexp.MustCompile(`^"\d+-[0-9a-f]{32}"$`)

func (c *comparer) header(name, want, have string) {
	switch {
	case want == "" && have == "":
	case want == "":
		c.addf("header %s: %q, CouchDB sends none", name, have)
	case have == "":
		c.addf("header %s missing, CouchDB: %q", name, want)
	case name == "Location":
		wu, err1 := url.Parse(want)
		hu, err2 := url.Parse(have)
		if err1 != nil || err2 != nil || c.m.text(wu.EscapedPath()) != hu.EscapedPath() {
			c.addf("header Location %q, CouchDB %q", have, want)
		}
	case name == "ETag" && !quotedRev.MatchString(want) && !strings.HasSuffix(want, `=="`):
		// An opaque ETag: only its presence is defined.
	default:
		if c.m.text(want) != have {
			c.addf("header %s %q, CouchDB %q", name, have, want)
		}
	}
}

// contentType compares media types and parameters, boundaries aside.
func (c *comparer) contentType(where, want, have string) {
	if want == "" && have == "" {
		return
	}
	wmt, wp, err1 := mime.ParseMediaType(want)
	hmt, hp, err2 := mime.ParseMediaType(have)
	if err1 != nil || err2 != nil {
		if want != have {
			c.addf("%s %q, CouchDB %q", where, have, want)
		}
		return
	}
	if wmt != hmt {
		c.addf("%s %q, CouchDB %q", where, have, want)
		return
	}
	for k, v := range wp {
		if k != "boundary" && hp[k] != v {
			c.addf("%s parameter %s=%q, CouchDB %q", where, k, hp[k], v)
		}
	}
	for k := range hp {
		if _, ok := wp[k]; !ok && k != "boundary" && k != "charset" {
			c.addf("%s has parameter %s, CouchDB has not", where, k)
		}
	}
}

// body compares two bodies by their CouchDB content type.
func (c *comparer) body(where, wantCT string, want []byte, haveCT string, have []byte, feed bool) {
	mt, params, _ := mime.ParseMediaType(wantCT)
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		c.multipart(where, wantCT, params["boundary"], want, haveCT, have)
	case mt == "application/json" || (mt == "text/plain" && looksJSON(want)):
		if feed {
			c.feed(where, want, have)
			return
		}
		c.jsonBytes(where, want, have)
	case mt == "text/event-stream":
		c.feed(where, want, have)
	default:
		if !bytes.Equal(want, have) {
			c.addf("%s: %d bytes differ from CouchDB's %d", where, len(have), len(want))
		}
	}
}

func looksJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

func gunzip(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return b
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return b
	}
	return out
}
