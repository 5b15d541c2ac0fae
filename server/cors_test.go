package server

import (
	"net/http"
	"testing"
	"time"
)

// CORS as CouchDB 3.5.0 answers it with [chttpd] enable_cors and a [cors]
// section (chttpd_cors): the Origin is echoed (for "*" too), credentials
// are allowed when configured, a preflight is answered 204 only when its
// method and every requested header are allowed (with CouchDB's default
// lists and max_age), and anything else goes on to its handler. Each
// answer here is what a live CouchDB 3.5.0 with the same [cors] settings
// gave to the same request (checked with curl on 2026-11-27; the corpus
// has no CORS exchanges).
func TestCORS(t *testing.T) {
	const app, evil = "http://app.example", "http://evil.example"
	ts := newTServer(t, Config{CORS: &CORS{Origins: []string{app}, Credentials: true}})
	ts.must(201, "PUT", "/db", nil)
	want := func(r resp, pairs ...string) {
		t.Helper()
		for i := 0; i+1 < len(pairs); i += 2 {
			if got := r.header.Get(pairs[i]); got != pairs[i+1] {
				t.Errorf("%s = %q, want %q (all: %v)", pairs[i], got, pairs[i+1], r.header)
			}
		}
	}
	preflight := func(ts *tserver, origin, method, headers string) resp {
		t.Helper()
		return ts.do("OPTIONS", "/db", nil, "Origin", origin, "Access-Control-Request-Method", method, "Access-Control-Request-Headers", headers)
	}
	r := preflight(ts, app, "POST", "Content-Type, If-Match")
	if r.status != http.StatusNoContent {
		t.Fatalf("preflight: %d", r.status)
	}
	want(r, "Access-Control-Allow-Origin", app, "Access-Control-Allow-Credentials", "true", "Access-Control-Max-Age", "600",
		"Access-Control-Allow-Methods", "CONNECT, COPY, DELETE, GET, HEAD, OPTIONS, POST, PUT, TRACE",
		"Access-Control-Allow-Headers", "Content-Type, If-Match")
	// A requested header CouchDB does not allow: no preflight answer, the
	// request goes to its handler (405 for OPTIONS /db), with the origin's headers.
	r = preflight(ts, app, "POST", "Content-Type, X-Evil")
	if r.status != http.StatusMethodNotAllowed {
		t.Errorf("refused preflight: %d", r.status)
	}
	want(r, "Access-Control-Allow-Methods", "", "Access-Control-Allow-Origin", app)
	r = preflight(ts, app, "post", "")
	want(r, "Access-Control-Allow-Methods", "") // methods match case-sensitively
	// Actual requests.
	r = ts.must(200, "GET", "/db", nil, "Origin", app)
	want(r, "Access-Control-Allow-Origin", app, "Access-Control-Allow-Credentials", "true",
		"Access-Control-Expose-Headers", "content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time")
	r = ts.must(200, "GET", "/db", nil, "Origin", evil)
	want(r, "Access-Control-Allow-Origin", "", "Access-Control-Allow-Credentials", "", "Access-Control-Expose-Headers", "")
	r = preflight(ts, evil, "GET", "")
	want(r, "Access-Control-Allow-Origin", "", "Access-Control-Allow-Methods", "")
	r = ts.must(200, "GET", "/db", nil, "Origin", "HTTP://APP.EXAMPLE") // origins match case-sensitively
	want(r, "Access-Control-Allow-Origin", "")

	// "*": any origin, echoed; credentials only when configured.
	star := newTServer(t, Config{CORS: &CORS{Origins: []string{"*"}}})
	want(star.must(200, "GET", "/", nil, "Origin", evil), "Access-Control-Allow-Origin", evil, "Access-Control-Allow-Credentials", "")
	starCred := newTServer(t, Config{CORS: &CORS{Origins: []string{"*"}, Credentials: true}})
	want(starCred.must(200, "GET", "/", nil, "Origin", evil), "Access-Control-Allow-Origin", evil, "Access-Control-Allow-Credentials", "true")
	want(preflight(starCred, evil, "PUT", "authorization"), "Access-Control-Allow-Origin", evil, "Access-Control-Allow-Credentials", "true")

	// methods, headers and max_age configured.
	own := newTServer(t, Config{CORS: &CORS{Origins: []string{app}, Methods: []string{"GET", "POST"}, Headers: []string{"x-app"}, MaxAge: time.Minute}})
	r = preflight(own, app, "POST", "X-App")
	want(r, "Access-Control-Allow-Methods", "GET, POST", "Access-Control-Allow-Headers", "X-App", "Access-Control-Max-Age", "60")
	want(preflight(own, app, "PUT", ""), "Access-Control-Allow-Methods", "")
	want(preflight(own, app, "POST", "content-type"), "Access-Control-Allow-Methods", "")

	none := newTServer(t, Config{})
	want(none.must(200, "GET", "/", nil, "Origin", app), "Access-Control-Allow-Origin", "")
}
