package server

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/server/access"
)

// wantsBasicChallenge reports whether a 401 should carry WWW-Authenticate:
// only for clients that sent no credentials and are not browser scripts
// (a challenge makes browsers pop up a login dialog).
func (s *Server) wantsBasicChallenge(r *http.Request) bool {
	if s.auth.AdminParty() {
		return false
	}
	if r.Header.Get("Authorization") != "" {
		return false
	}
	if _, err := r.Cookie(access.CookieName); err == nil {
		return false
	}
	return r.Header.Get("X-Requested-With") == "" && r.Header.Get("Origin") == ""
}

// setSessionCookie sends a session cookie value as CouchDB does.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, value string) {
	// As CouchDB: Expires and Max-Age, Path=/, HttpOnly, no SameSite
	// (a browser app on another port of the same host is same-site).
	http.SetCookie(w, &http.Cookie{
		Name:     access.CookieName,
		Value:    value,
		Path:     "/",
		Expires:  s.now().Add(time.Duration(s.sessions().MaxAge()) * time.Second),
		MaxAge:   s.sessions().MaxAge(),
		HttpOnly: true,
		Secure:   r.TLS != nil,
	})
}

// serveSession is /_session: POST logs in (JSON or form body), GET tells
// who is logged in, DELETE logs out.
func (s *Server) serveSession(w http.ResponseWriter, r *http.Request, c *call) {
	switch r.Method {
	case http.MethodPost:
		s.login(w, r)
	case http.MethodGet, http.MethodHead:
		u := c.auth.User
		if r.URL.Query().Get("basic") == "true" && u.IsAnonymous() {
			s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrUnauthorized, "Please login."))
			return
		}
		info := map[string]any{"authentication_handlers": s.authHandlers()}
		if c.auth.Method != "" {
			info["authenticated"] = c.auth.Method
		}
		if s.auth.AdminParty() {
			info["authenticated"] = "default"
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "userCtx": u.JSON(), "info": info})
	case http.MethodDelete:
		http.SetCookie(w, &http.Cookie{Name: access.CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true})
		if next := r.URL.Query().Get("next"); next != "" && strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") {
			w.Header().Set("Location", next)
			writeJSON(w, http.StatusFound, okTrue)
			return
		}
		writeJSON(w, http.StatusOK, okTrue)
	default:
		s.writeError(w, r, methodNotAllowed("GET,HEAD,POST,DELETE"))
	}
}

// authHandlers are the names of the authentication handlers, in the
// order they are tried.
func (s *Server) authHandlers() []string {
	if !s.cfg.JWT.Empty() {
		return []string{"cookie", "jwt", "default"}
	}
	return []string{"cookie", "default"}
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	name, pass, err := sessionCredentials(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	u := access.Admin(name)
	if !s.auth.AdminParty() {
		var salt string
		u, salt, err = s.auth.Login(r.Context(), access.Peer(r), name, pass, true)
		if err != nil {
			if errors.Is(err, access.ErrBadCredentials) {
				s.setSessionCookie(w, r, "") // CouchDB clears it on a failed login
			}
			s.writeError(w, r, err)
			return
		}
		s.setSessionCookie(w, r, s.sessions().Make(u.Name, salt, s.now()))
	}
	answer := map[string]any{"ok": true, "name": nullable(u.Name), "roles": u.JSON()["roles"]}
	if next := r.URL.Query().Get("next"); next != "" && strings.HasPrefix(next, "/") && !strings.HasPrefix(next, "//") {
		w.Header().Set("Location", next)
		writeJSON(w, http.StatusFound, answer)
		return
	}
	writeJSON(w, http.StatusOK, answer)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func sessionCredentials(r *http.Request) (name, password string, err error) {
	b, err := readBody(r)
	if err != nil {
		return "", "", err
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var names []string
	switch mt {
	case "application/x-www-form-urlencoded":
		v, err := url.ParseQuery(string(b))
		if err != nil {
			return "", "", badRequest("invalid form body")
		}
		names = append(v["name"], v["username"]...)
		password = v.Get("password")
	case "application/json":
		var body struct {
			Name     *string         `json:"name"`
			Username *string         `json:"username"`
			Password json.RawMessage `json:"password"`
		}
		if err := decodeJSON(b, &body); err != nil {
			return "", "", err
		}
		for _, n := range []*string{body.Name, body.Username} {
			if n != nil {
				names = append(names, *n)
			}
		}
		if len(body.Password) > 0 && json.Unmarshal(body.Password, &password) != nil {
			return "", "", badRequest("password must be a string")
		}
	default:
		return "", "", &couchdoc.Error{Status: http.StatusUnsupportedMediaType, Name: "bad_content_type",
			Reason: "Content-Type must be 'application/x-www-form-urlencoded' or 'application/json'"}
	}
	if len(names) == 0 {
		return "", "", badRequest("request body must contain a username")
	}
	for _, n := range names[1:] {
		if n != names[0] {
			return "", "", badRequest("request body contains different usernames")
		}
	}
	return names[0], password, nil
}
