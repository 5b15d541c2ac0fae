package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBasicAuth(t *testing.T) {
	ts := newTServer(t, Config{Users: map[string]string{"ann": "secret"}})
	// Public endpoints.
	ts.must(200, "GET", "/", nil)
	ts.must(200, "GET", "/_up", nil)
	ts.must(200, "GET", "/_session", nil)
	// Anonymous: 401 with a challenge for non-browser clients only.
	r := ts.do("PUT", "/db", nil)
	if r.status != 401 || r.json(t)["error"] != "unauthorized" || r.header.Get("WWW-Authenticate") == "" {
		t.Fatalf("anonymous: %d %v %s", r.status, r.header, r.body)
	}
	if r := ts.do("GET", "/_all_dbs", nil, "X-Requested-With", "XMLHttpRequest"); r.status != 401 || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("browser: %d %v", r.status, r.header)
	}
	ts.user, ts.pass = "ann", "wrong"
	if r := ts.do("GET", "/_all_dbs", nil); r.status != 401 || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("wrong password: %d %v", r.status, r.header)
	}
	ts.user = "bob"
	ts.wantError(401, "unauthorized", "GET", "/_all_dbs", nil)
	ts.user, ts.pass = "ann", "secret"
	ts.must(201, "PUT", "/db", nil)
	ts.putDoc("db", "x", map[string]any{})
	if m := ts.must(200, "GET", "/_session", nil).json(t); m["userCtx"].(map[string]any)["name"] != "ann" {
		t.Fatalf("_session: %v", m)
	}
}

func TestCookieSession(t *testing.T) {
	// Two admins: without one left, the server would be an admin party.
	ts := newTServer(t, Config{Users: map[string]string{"ann": "secret", "root": "x"}, SessionTimeout: time.Hour})
	ts.wantError(401, "unauthorized", "POST", "/_session", map[string]string{"name": "ann", "password": "nope"})
	ts.wantError(400, "bad_request", "POST", "/_session", "{")
	r := ts.must(200, "POST", "/_session", map[string]string{"name": "ann", "password": "secret"})
	if m := r.json(t); m["ok"] != true || m["name"] != "ann" {
		t.Fatalf("login: %s", r.body)
	}
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "AuthSession" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.Value == "" {
		t.Fatalf("no AuthSession cookie: %v", r.header)
	}
	if strings.Contains(cookie.Value, "secret") {
		t.Fatal("cookie holds the password")
	}
	ts.must(200, "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+cookie.Value)
	m := ts.must(200, "GET", "/_session", nil, "Cookie", "AuthSession="+cookie.Value).json(t)
	if m["userCtx"].(map[string]any)["name"] != "ann" || m["info"].(map[string]any)["authenticated"] != "cookie" {
		t.Fatalf("_session: %v", m)
	}
	// Form login works too.
	ts.must(200, "POST", "/_session", "name=ann&password=secret", "Content-Type", "application/x-www-form-urlencoded")
	// A cookie whose signature was tampered with is anonymous; one that
	// is not a session cookie at all is CouchDB's 400.
	raw, err := base64.RawURLEncoding.DecodeString(cookie.Value)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1 // the last byte of the HMAC
	ts.wantError(401, "unauthorized", "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+base64.RawURLEncoding.EncodeToString(raw))
	ts.wantError(400, "bad_request", "GET", "/_all_dbs", nil, "Cookie", "AuthSession=garbage")
	// Expired and signed-with-another-secret cookies are anonymous.
	ts.s.auth.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	ts.wantError(401, "unauthorized", "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+cookie.Value)
	ts.s.auth.Now = nil
	other := newTServer(t, Config{Users: map[string]string{"ann": "secret"}})
	other.wantError(401, "unauthorized", "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+cookie.Value)
	// A cookie of a removed user, or of an old password, is anonymous.
	delete(ts.s.cfg.Users, "ann")
	ts.wantError(401, "unauthorized", "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+cookie.Value)
	ts.s.cfg.Users["ann"] = "new secret"
	ts.wantError(401, "unauthorized", "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+cookie.Value)
	ts.s.cfg.Users["ann"] = "secret"
	ts.must(200, "GET", "/_all_dbs", nil, "Cookie", "AuthSession="+cookie.Value)
	// Logout clears the cookie.
	r = ts.must(200, "DELETE", "/_session", nil)
	if !strings.Contains(r.header.Get("Set-Cookie"), "AuthSession=;") {
		t.Fatalf("logout: %v", r.header)
	}
}

func TestBodyLimit(t *testing.T) {
	ts := newTServer(t, Config{MaxBodySize: 1000})
	ts.must(201, "PUT", "/db", nil)
	seq := ts.updateSeq("db")
	big := `{"a":"` + strings.Repeat("x", 2000) + `"}`
	ts.wantError(413, "too_large", "PUT", "/db/doc", big)
	// Chunked (no Content-Length): the limit trips while reading.
	ts.wantError(413, "too_large", "PUT", "/db/doc", io.MultiReader(strings.NewReader(big)))
	ts.wantError(413, "too_large", "POST", "/db/_bulk_docs", io.MultiReader(strings.NewReader(`{"docs":[`+big+`]}`)))
	ts.wantError(413, "too_large", "PUT", "/db/doc/att", io.MultiReader(bytes.NewReader(make([]byte, 5000))))
	ct, body := relatedBody(t, map[string]any{}, map[string][]byte{"a": make([]byte, 5000)})
	ts.wantError(413, "too_large", "PUT", "/db/doc", io.MultiReader(bytes.NewReader(body)), "Content-Type", ct)
	if ts.updateSeq("db") != seq {
		t.Fatal("a refused body changed the database")
	}
	ts.putDoc("db", "doc", map[string]any{"small": true})
}

// Credentials never reach the log.
func TestNoCredentialsInLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ts := newTServer(t, Config{Users: map[string]string{"ann": "s3cr3t-pw"}, Logger: log})
	ts.user, ts.pass = "ann", "s3cr3t-pw"
	ts.must(201, "PUT", "/db", nil)
	ts.do("POST", "/_session", map[string]string{"name": "ann", "password": "s3cr3t-pw"})
	ts.user, ts.pass = "ann", "wrong-pw"
	ts.do("GET", "/db", nil)
	if strings.Contains(buf.String(), "s3cr3t") || strings.Contains(buf.String(), "wrong-pw") || buf.Len() == 0 {
		t.Fatalf("log: %s", buf.String())
	}
}

func TestListenSafety(t *testing.T) {
	s, err := New(Config{DataDir: t.TempDir(), Addr: "0.0.0.0:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ListenAndServe(context.Background()); !errors.Is(err, ErrInsecure) {
		t.Fatalf("admin party on 0.0.0.0: %v", err)
	}
	for _, addr := range []string{":0", "[::]:0", "192.0.2.1:0"} {
		if err := s.checkAddr(addr); !errors.Is(err, ErrInsecure) {
			t.Errorf("checkAddr(%q) = %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := s.checkAddr(addr); err != nil {
			t.Errorf("checkAddr(%q) = %v", addr, err)
		}
	}
	withUsers, _ := New(Config{DataDir: t.TempDir(), Users: map[string]string{"a": "b"}})
	if err := withUsers.checkAddr("0.0.0.0:5984"); err != nil {
		t.Fatalf("with users: %v", err)
	}
	if s.cfg.Addr != "0.0.0.0:0" {
		t.Fatal("Addr rewritten")
	}
	def, _ := New(Config{DataDir: t.TempDir()})
	if def.cfg.Addr != "127.0.0.1:5984" {
		t.Fatalf("default address %q", def.cfg.Addr)
	}
}

// Cancelling ctx ends continuous feeds and Serve returns.
func TestGracefulShutdown(t *testing.T) {
	s, err := New(Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, l) }()
	url := "http://" + l.Addr().String()
	req, _ := http.NewRequest("PUT", url+"/db", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 201 {
		t.Fatalf("create: %v %v", err, res)
	}
	res.Body.Close()
	res, err = http.Get(url + "/db/_changes?feed=continuous&heartbeat=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	cancel()
	rest, err := io.ReadAll(br)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("feed did not end cleanly: %v", err)
	}
	if !strings.Contains(string(rest), `"last_seq"`) {
		t.Logf("feed ended without last_seq: %q", rest)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
		t.Fatal("still listening")
	}
}
