package access

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	gosync "sync"
	"time"

	"github.com/settee/settee/couchdoc"
)

// UserSource finds the user documents of the _users database. User
// returns ok false for a missing or deleted user; a user whose document
// has no password hash is ok, with an empty Hash that no password
// matches (failed logins still count towards its lockout, as CouchDB's).
type UserSource interface {
	User(ctx context.Context, name string) (u User, ok bool, err error)
}

// Methods say how a request authenticated, as GET /_session's
// info.authenticated.
const (
	MethodDefault = "default" // basic auth
	MethodCookie  = "cookie"
	MethodJWT     = "jwt"
)

// ErrBadCredentials is CouchDB's answer to a wrong name or password.
var ErrBadCredentials = couchdoc.Errorf(couchdoc.ErrUnauthorized, "Name or password is incorrect.")

// ErrMalformedCookie is CouchDB's answer to an AuthSession cookie that is
// not one at all.
var ErrMalformedCookie = couchdoc.Errorf(couchdoc.ErrBadRequest, "Malformed AuthSession cookie. Please clear your cookies.")

// Authenticator finds the user of a request as CouchDB's authentication
// handlers, tried in CouchDB's order: the session cookie, a JWT bearer
// token, then basic auth; a request with none is anonymous. Server admins
// come from the configuration (Admins), everyone else from Users.
type Authenticator struct {
	// Admins maps server admins' names to their passwords. When empty,
	// everyone is a server admin ("admin party").
	Admins   map[string]string
	Users    UserSource // nil: no _users database
	Sessions Sessions
	JWT      *JWTKeys // nil or empty: bearer tokens are not accepted
	Lockout  *Lockout // nil: no lockout
	Verifier *Verifier
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Clock returns the current time of a's clock.
func (a *Authenticator) Clock() time.Time { return a.now() }

func (a *Authenticator) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// Result is who a request is from.
type Result struct {
	User UserCtx
	// Method is how it authenticated ("" when anonymous or in an admin
	// party).
	Method string
	// Renew, when not empty, is a fresh session cookie value to send.
	Renew string
}

// AdminParty reports whether everyone is a server admin.
func (a *Authenticator) AdminParty() bool { return len(a.Admins) == 0 }

// Authenticate returns the user of r. Wrong basic credentials and bad
// bearer tokens are errors; a cookie that does not verify or has expired
// is ignored, as CouchDB does (the request is then anonymous).
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (Result, error) {
	if a.AdminParty() {
		return Result{User: Admin("")}, nil
	}
	now := a.now()
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		res, ok, err := a.fromCookie(ctx, c.Value, now)
		if err != nil || ok {
			return res, err
		}
	}
	if h := r.Header.Get("Authorization"); !a.JWT.Empty() && strings.HasPrefix(h, "Bearer ") {
		u, err := a.JWT.Verify(strings.TrimSpace(strings.TrimPrefix(h, "Bearer ")), now)
		if err != nil {
			return Result{}, err
		}
		return Result{User: u, Method: MethodJWT}, nil
	}
	name, pass, ok, err := basicAuth(r)
	if err != nil {
		return Result{}, err
	}
	if ok {
		u, _, err := a.Login(ctx, Peer(r), name, pass, false)
		if err != nil {
			return Result{}, err
		}
		return Result{User: u, Method: MethodDefault}, nil
	}
	return Result{User: Anonymous}, nil
}

func (a *Authenticator) fromCookie(ctx context.Context, value string, now time.Time) (Result, bool, error) {
	c, ok := ParseCookie(value)
	if !ok {
		return Result{}, false, ErrMalformedCookie
	}
	u, salt, found, err := a.lookup(ctx, c.Name)
	if err != nil || !found || !a.Sessions.Verify(c, salt, now) {
		return Result{}, false, err
	}
	res := Result{User: u, Method: MethodCookie}
	if a.Sessions.NeedsRenewal(c, now) {
		res.Renew = a.Sessions.Make(u.Name, salt, now)
	}
	return res, true, nil
}

// lookup finds a user by name: a configured admin first, then _users.
func (a *Authenticator) lookup(ctx context.Context, name string) (UserCtx, string, bool, error) {
	if pw, ok := a.Admins[name]; ok {
		return Admin(name), a.adminSalt(name, pw), true, nil
	}
	if a.Users == nil {
		return UserCtx{}, "", false, nil
	}
	u, ok, err := a.Users.User(ctx, name)
	if err != nil || !ok || u.Hash.Salt == "" {
		// Without a salt there is no session to sign for the user.
		return UserCtx{}, "", false, err
	}
	return UserCtx{Name: u.Name, Roles: u.Roles}, u.Hash.Salt, true, nil
}

// adminSalt stands in for the salt of a configured admin's hash: it
// changes with the password, so a new password ends the admin's sessions.
func (a *Authenticator) adminSalt(name, password string) string {
	m := hmac.New(sha256.New, a.Sessions.Secret)
	m.Write([]byte("admin\x00" + name + "\x00" + password))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Login checks a name and password (basic auth or POST /_session) from
// peer and returns the user and the salt its session cookie is signed
// with. A locked-out name gets ErrLocked; a wrong password
// ErrBadCredentials, and counts towards the lockout, kept per address,
// name and salt as CouchDB's (a new password starts a new count); an
// unknown name counts only when countUnknown (CouchDB counts them for
// POST /_session, not for basic auth).
func (a *Authenticator) Login(ctx context.Context, peer, name, password string, countUnknown bool) (UserCtx, string, error) {
	now := a.now()
	if want, ok := a.Admins[name]; ok {
		salt := a.adminSalt(name, want)
		if a.Lockout.Locked(peer, name+"\x00"+salt, now) {
			return UserCtx{}, "", ErrLocked
		}
		if hmac.Equal([]byte(want), []byte(password)) {
			return Admin(name), salt, nil
		}
		a.Lockout.Fail(peer, name+"\x00"+salt, now)
		return UserCtx{}, "", ErrBadCredentials
	}
	if a.Users != nil {
		u, ok, err := a.Users.User(ctx, name)
		if err != nil {
			return UserCtx{}, "", err
		}
		if ok {
			key := name + "\x00" + u.Hash.Salt
			if a.Lockout.Locked(peer, key, now) {
				return UserCtx{}, "", ErrLocked
			}
			if a.verifier().Verify(name, password, u.Hash) {
				return UserCtx{Name: u.Name, Roles: u.Roles}, u.Hash.Salt, nil
			}
			a.Lockout.Fail(peer, key, now)
			return UserCtx{}, "", ErrBadCredentials
		}
	}
	if countUnknown {
		if a.Lockout.Locked(peer, name+"\x00", now) {
			return UserCtx{}, "", ErrLocked
		}
		a.Lockout.Fail(peer, name+"\x00", now)
	}
	return UserCtx{}, "", ErrBadCredentials
}

var sharedVerifier = gosync.OnceValue(func() *Verifier { return NewVerifier(0) })

func (a *Authenticator) verifier() *Verifier {
	if a.Verifier == nil {
		return sharedVerifier()
	}
	return a.Verifier
}

// ErrBadBasic is CouchDB's answer to a Basic header that is not base64.
var ErrBadBasic = couchdoc.Errorf(couchdoc.ErrBadRequest, "Authorization header has invalid base64 value")

// basicAuth reads Basic credentials as CouchDB: bad base64 is an error, a
// value without a colon is no credentials at all.
func basicAuth(r *http.Request) (name, password string, ok bool, err error) {
	h := r.Header.Get("Authorization")
	if len(h) < 6 || !strings.EqualFold(h[:6], "Basic ") {
		return "", "", false, nil
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[6:]))
	if err != nil {
		return "", "", false, ErrBadBasic
	}
	name, password, ok = strings.Cut(string(b), ":")
	return name, password, ok, nil
}

// Peer is the address of a request's client, without its port.
func Peer(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
