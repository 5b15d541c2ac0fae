package server

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CouchDB 3.5's [cors] defaults (chttpd_cors.hrl).
var (
	corsDefaultMethods = []string{"CONNECT", "COPY", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "TRACE"}
	corsDefaultHeaders = []string{"accept", "accept-language", "authorization", "content-length", "content-range",
		"content-type", "destination", "expires", "if-match", "last-modified", "origin", "pragma",
		"x-couch-full-commit", "x-couch-id", "x-couch-persist", "x-couchdb-www-authenticate",
		"x-http-method-override", "x-requested-with", "x-couchdb-vhost-path"}
)

const (
	corsDefaultMaxAge = 600 * time.Second
	// corsExpose is what CouchDB exposes: the simple response headers it
	// sends, content-type, and its own headers.
	corsExpose = "content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time"
)

// requestHeaderList splits Access-Control-Request-Headers as CouchDB does.
var requestHeaderList = regexp.MustCompile(`,\s*`)

// cors applies CORS as CouchDB 3.5 does with [chttpd] enable_cors and a
// [cors] section (chttpd_cors): a request from an allowed Origin gets
// Access-Control-Allow-Origin (that origin, "*" configured or not),
// Access-Control-Allow-Credentials with Credentials, and the exposed
// headers; a preflight (OPTIONS with Access-Control-Request-Method) whose
// method and requested headers are all allowed is answered 204 here, and
// cors returns true. Any other request, a refused preflight included,
// goes on to its handler, as in CouchDB.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	c := s.cfg.CORS
	origin := r.Header.Get("Origin")
	if c == nil || origin == "" {
		return false
	}
	h := w.Header()
	h.Add("Vary", "Origin")
	if !slices.Contains(c.Origins, "*") && !slices.Contains(c.Origins, origin) {
		return false
	}
	h.Set("Access-Control-Allow-Origin", origin)
	if c.Credentials && origin != "*" {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	method := r.Header.Get("Access-Control-Request-Method")
	if r.Method == http.MethodOptions && method != "" && s.preflightAllowed(method, r.Header.Get("Access-Control-Request-Headers")) {
		methods := c.Methods
		if len(methods) == 0 {
			methods = corsDefaultMethods
		}
		maxAge := c.MaxAge
		if maxAge <= 0 {
			maxAge = corsDefaultMaxAge
		}
		h.Set("Access-Control-Max-Age", strconv.Itoa(int(maxAge/time.Second)))
		h.Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
		h.Set("Access-Control-Allow-Headers", r.Header.Get("Access-Control-Request-Headers"))
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Access-Control-Expose-Headers", corsExpose)
	return false
}

// preflightAllowed reports whether a preflight's method (case-sensitive)
// and every requested header (case-insensitive) are allowed.
func (s *Server) preflightAllowed(method, requested string) bool {
	c := s.cfg.CORS
	methods, headers := c.Methods, c.Headers
	if len(methods) == 0 {
		methods = corsDefaultMethods
	}
	if len(headers) == 0 {
		headers = corsDefaultHeaders
	}
	if !slices.Contains(methods, method) {
		return false
	}
	if requested == "" {
		return true
	}
	for _, h := range requestHeaderList.Split(strings.TrimSpace(requested), -1) {
		h = strings.ToLower(strings.TrimSpace(h))
		if h != "" && !slices.ContainsFunc(headers, func(a string) bool { return strings.EqualFold(a, h) }) {
			return false
		}
	}
	return true
}
