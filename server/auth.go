package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
)

const sessionCookie = "AuthSession"

var errBadCredentials = couchdoc.Errorf(couchdoc.ErrUnauthorized, "Name or password is incorrect.")

// checkPassword compares in constant time (over the password; whether the
// user exists leaks no more than timing of a map lookup).
func (s *Server) checkPassword(name, password string) bool {
	want, ok := s.cfg.Users[name]
	if !ok {
		want = "\x00settee-no-such-user"
	}
	eq := subtle.ConstantTimeCompare([]byte(want), []byte(password)) == 1
	return ok && eq
}

// authenticate returns the user of the request: from basic auth or a
// session cookie; "" when anonymous. Without configured users everyone is
// the admin and it returns "_admin". Wrong basic credentials are an error;
// a bad or expired cookie is ignored (CouchDB treats it as anonymous).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (string, error) {
	if len(s.cfg.Users) == 0 {
		return "_admin", nil
	}
	if name, pass, ok := r.BasicAuth(); ok {
		if !s.checkPassword(name, pass) {
			return "", errBadCredentials
		}
		return name, nil
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		name, expires, ok := s.verifySession(c.Value, time.Now())
		if ok {
			// Refresh a cookie past half its life, as CouchDB does.
			if time.Until(expires) < s.cfg.SessionTimeout/2 {
				s.setSessionCookie(w, r, name)
			}
			return name, nil
		}
	}
	return "", nil
}

// wantsBasicChallenge reports whether a 401 should carry WWW-Authenticate:
// only for clients that sent no credentials and are not browser scripts
// (a challenge makes browsers pop up a login dialog).
func (s *Server) wantsBasicChallenge(r *http.Request) bool {
	if len(s.cfg.Users) == 0 {
		return false
	}
	if _, _, ok := r.BasicAuth(); ok {
		return false
	}
	if _, err := r.Cookie(sessionCookie); err == nil {
		return false
	}
	return r.Header.Get("X-Requested-With") == "" && r.Header.Get("Origin") == ""
}

// signSession makes a cookie value: base64url("name:expiryhex:mac").
func (s *Server) signSession(name string, expires time.Time) string {
	payload := name + ":" + strconv.FormatInt(expires.Unix(), 16)
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte(payload))
	sig := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	return base64.RawURLEncoding.EncodeToString([]byte(payload + ":" + sig))
}

// verifySession checks a cookie value's signature and expiry, and that
// its user still exists.
func (s *Server) verifySession(value string, now time.Time) (name string, expires time.Time, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return "", time.Time{}, false
	}
	i := strings.LastIndexByte(string(raw), ':')
	if i < 0 {
		return "", time.Time{}, false
	}
	payload, sig := string(raw[:i]), string(raw[i+1:])
	mac := hmac.New(sha256.New, s.secret)
	mac.Write([]byte(payload))
	want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return "", time.Time{}, false
	}
	j := strings.LastIndexByte(payload, ':')
	if j < 0 {
		return "", time.Time{}, false
	}
	exp, err := strconv.ParseInt(payload[j+1:], 16, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	name, expires = payload[:j], time.Unix(exp, 0)
	if !now.Before(expires) {
		return "", time.Time{}, false
	}
	if _, exists := s.cfg.Users[name]; !exists {
		return "", time.Time{}, false
	}
	return name, expires, true
}

func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, name string) {
	expires := time.Now().Add(s.cfg.SessionTimeout)
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    s.signSession(name, expires),
		Path:     "/",
		MaxAge:   int(s.cfg.SessionTimeout / time.Second),
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

// serveSession is /_session: POST logs in (JSON or form body), GET tells
// who is logged in, DELETE logs out.
func (s *Server) serveSession(w http.ResponseWriter, r *http.Request, user string) {
	switch r.Method {
	case http.MethodPost:
		name, pass, err := sessionCredentials(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if len(s.cfg.Users) > 0 && !s.checkPassword(name, pass) {
			s.writeError(w, r, errBadCredentials)
			return
		}
		if len(s.cfg.Users) > 0 {
			s.setSessionCookie(w, r, name)
		}
		if next := r.URL.Query().Get("next"); next != "" && strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") {
			w.Header().Set("Location", next)
			writeJSON(w, http.StatusFound, map[string]any{"ok": true, "name": name, "roles": roles(name)})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "name": name, "roles": roles(name)})
	case http.MethodGet, http.MethodHead:
		var nameVal any
		method := "default"
		if user != "" {
			nameVal = user
			if _, _, ok := r.BasicAuth(); !ok {
				method = "cookie"
			}
		}
		if user == "_admin" {
			nameVal = nil
		}
		info := map[string]any{"authentication_handlers": []string{"cookie", "default"}}
		if user != "" && user != "_admin" {
			info["authenticated"] = method
		}
		userRoles := []string{}
		if user != "" {
			userRoles = roles(user)
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"ok":      true,
			"userCtx": map[string]any{"name": nameVal, "roles": userRoles},
			"info":    info,
		})
	case http.MethodDelete:
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
		writeJSON(w, http.StatusOK, okTrue)
	default:
		s.writeError(w, r, methodNotAllowed("DELETE,GET,HEAD,POST"))
	}
}

// roles are a user's roles: every configured user administers the server.
func roles(string) []string { return []string{"_admin"} }

func sessionCredentials(r *http.Request) (name, password string, err error) {
	b, err := readBody(r)
	if err != nil {
		return "", "", err
	}
	ct := r.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		v, err := url.ParseQuery(string(b))
		if err != nil {
			return "", "", badRequest("invalid form body")
		}
		return v.Get("name"), v.Get("password"), nil
	}
	var body struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := decodeJSON(b, &body); err != nil {
		return "", "", err
	}
	if body.Name == "" {
		return "", "", badRequest("name and password are required")
	}
	return body.Name, body.Password, nil
}
