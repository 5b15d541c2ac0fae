package server

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
)

type stringError string

func (e stringError) Error() string { return string(e) }

func errorString(format string, args ...any) error {
	return stringError(fmt.Sprintf(format, args...))
}

// badRequest returns a 400 bad_request error with a formatted reason.
func badRequest(format string, args ...any) error {
	return couchdoc.Errorf(couchdoc.ErrBadRequest, format, args...)
}

// writeJSON writes v as the JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		status = http.StatusInternalServerError
		buf.WriteString(`{"error":"unknown_error","reason":"encode answer"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "must-revalidate")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorBody is CouchDB's error answer.
type errorBody struct {
	Error  string `json:"error"`
	Reason any    `json:"reason"`
	Ref    int64  `json:"ref,omitempty"`
}

// toCouchError maps err to the CouchDB error it answers as.
func toCouchError(err error) *couchdoc.Error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return couchdoc.Errorf(couchdoc.ErrTooLarge, "the request body is larger than %d bytes", mbe.Limit)
	}
	if errors.Is(err, localdb.ErrClosed) {
		// The server is stopping under the request (writeError answers
		// a database deleted under it as missing); clients retry a 503.
		return &couchdoc.Error{Status: http.StatusServiceUnavailable, Name: "service_unavailable", Reason: "the database was closed", Err: err}
	}
	var ce *couchdoc.Error
	if errors.As(err, &ce) {
		if ce.Status == 0 {
			return couchdoc.FromBody(0, ce.Name, ce.Reason)
		}
		return ce
	}
	return &couchdoc.Error{Status: http.StatusInternalServerError, Name: "unknown_error", Reason: "internal server error", Err: err}
}

// writeError answers with err's CouchDB error body. Errors that are not
// CouchDB errors are logged and answered as 500 without their text.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away
	}
	if errors.Is(err, localdb.ErrClosed) && !s.dbs.stopped.Load() {
		// DELETE /{db} closed the database under this request: as in
		// CouchDB, the request meets a database that does not exist.
		err = errNoDB
	}
	ce := toCouchError(err)
	if bw, ok := r.Body.(*bodyWatch); ok && bw.tooLarge {
		// The limit tripped, whatever layer reported the failed read.
		ce = toCouchError(bw.err)
	} else if ok && bw.cut {
		// The client's body broke off, whatever layer reported it: the
		// client is most likely gone (CouchDB answers nothing then). A
		// 400, should it still listen; nothing failed here.
		ce = couchdoc.Errorf(couchdoc.ErrBadRequest, "the request body ended early: %v", bw.err)
	}
	if ce.Status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if ce.Status == http.StatusUnauthorized && s.wantsBasicChallenge(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="settee"`)
	}
	var reason any = ce.Reason
	if len(ce.ReasonJSON) > 0 {
		reason = ce.ReasonJSON
	}
	writeJSON(w, ce.Status, errorBody{Error: ce.Name, Reason: reason, Ref: ce.Ref})
}

// readBody reads a whole (size-limited) request body.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return b, nil
}

// readJSONRequest reads a body that must be application/json: else
// CouchDB's 415, as chttpd:validate_ctype answers for _find, _index and
// _purge.
func readJSONRequest(r *http.Request) ([]byte, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		return nil, &couchdoc.Error{Status: http.StatusUnsupportedMediaType, Name: "bad_content_type", Reason: "Content-Type must be application/json"}
	}
	return readBody(r)
}

// decodeJSONBody decodes a JSON request body into v; malformed JSON is 400.
func decodeJSONBody(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeJSON(b, v)
}

func decodeJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequest("invalid JSON: %v", err)
	}
	if dec.More() {
		return badRequest("invalid JSON: trailing data")
	}
	return nil
}

// okRev is the answer of a document write.
type okRev struct {
	OK  bool   `json:"ok"`
	ID  string `json:"id"`
	Rev string `json:"rev"`
}

var okTrue = map[string]bool{"ok": true}

// jsonMarshal encodes v without HTML escaping.
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// requestBodyError classifies an error of reading a request body: a body
// that is too large stays 413, a CouchDB error keeps its status, anything
// else (truncated or malformed) is the client's fault: 400.
func requestBodyError(what string, err error) error {
	var mbe *http.MaxBytesError
	var ce *couchdoc.Error
	if errors.As(err, &mbe) || errors.As(err, &ce) {
		return err
	}
	return badRequest("invalid %s body: %v", what, err)
}

// bodyWatch remembers that the size limit tripped, or that the body broke
// off (the client went away), while reading a request body, even when a
// layer in between (the store, a parser) reports the failed read as some
// other error.
type bodyWatch struct {
	io.ReadCloser
	tooLarge bool
	cut      bool // the client's body broke off
	err      error
}

func (b *bodyWatch) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	switch {
	case err == nil || err == io.EOF:
	case errors.As(err, &mbe):
		b.tooLarge, b.err = true, err
	default:
		// The body ended before its length, or the connection broke:
		// the client went away mid-request.
		b.cut, b.err = true, err
	}
	return n, err
}

// setLocation sets the Location of a document (or of one of its
// attachments) a request created, as CouchDB does: an absolute URL on the
// request's host whose id is one escaped segment ("_design%2Fx").
func setLocation(w http.ResponseWriter, r *http.Request, db, id, att string) {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	// CouchDB leaves ':' as it is (org.couchdb.user:NAME).
	esc := func(s string) string { return strings.ReplaceAll(wire.EscapeSegment(s), "%3A", ":") }
	loc := scheme + r.Host + "/" + esc(db) + "/" + esc(id)
	if att != "" {
		loc += "/" + esc(att)
	}
	w.Header().Set("Location", loc)
}

// dbName is the database a request's path names (its first segment).
func dbName(r *http.Request) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if name, err := url.PathUnescape(seg); err == nil {
		return name
	}
	return seg
}

// opaqueETag makes an ETag like CouchDB's opaque ones (25 base32 hex
// characters) from what identifies the answer.
func opaqueETag(parts ...string) string {
	sum := md5.Sum([]byte(strings.Join(parts, "\x00")))
	return `"` + strings.ToUpper(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])) + `"`
}
