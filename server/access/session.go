package access

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// CookieName is the session cookie's name.
const CookieName = "AuthSession"

// DefaultSessionTimeout is CouchDB's [chttpd_auth] timeout.
const DefaultSessionTimeout = 600 * time.Second

// Sessions makes and checks AuthSession cookies as CouchDB's
// cookie_authentication_handler: base64url("name:hextime:hmac") where the
// HMAC-SHA256 key is the server secret followed by the user's salt, so
// that a new password (a new salt) ends the user's sessions.
type Sessions struct {
	Secret  []byte
	Timeout time.Duration
}

func (s Sessions) timeout() time.Duration {
	if s.Timeout <= 0 {
		return DefaultSessionTimeout
	}
	return s.Timeout
}

func (s Sessions) mac(name, hexTime, salt string) []byte {
	key := append(append([]byte(nil), s.Secret...), salt...)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(name + ":" + hexTime))
	return m.Sum(nil)
}

// Make returns a cookie value for name, issued at now.
func (s Sessions) Make(name, salt string, now time.Time) string {
	hexTime := strings.ToUpper(strconv.FormatInt(now.Unix(), 16))
	raw := name + ":" + hexTime + ":" + string(s.mac(name, hexTime, salt))
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// Cookie is a parsed AuthSession value, not yet verified.
type Cookie struct {
	Name    string
	Issued  time.Time
	hexTime string
	mac     []byte
}

// ParseCookie splits a cookie value; ok is false for one that is not
// CouchDB's shape.
func ParseCookie(value string) (Cookie, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(value, "="))
	if err != nil {
		return Cookie{}, false
	}
	// The name may hold ':'? No: CouchDB refuses such names; split on the
	// first two colons, the HMAC bytes may hold any byte.
	parts := strings.SplitN(string(raw), ":", 3)
	if len(parts) != 3 || parts[0] == "" {
		return Cookie{}, false
	}
	t, err := strconv.ParseInt(parts[1], 16, 64)
	if err != nil || t < 0 {
		return Cookie{}, false
	}
	return Cookie{Name: parts[0], Issued: time.Unix(t, 0), hexTime: parts[1], mac: []byte(parts[2])}, true
}

// Verify reports whether c was made by this server for a user whose salt
// is salt and has not expired at now.
func (s Sessions) Verify(c Cookie, salt string, now time.Time) bool {
	if !hmac.Equal(c.mac, s.mac(c.Name, c.hexTime, salt)) {
		return false
	}
	return now.Before(c.Issued.Add(s.timeout()))
}

// NeedsRenewal reports whether a valid cookie should be replaced by a new
// one: as CouchDB, once less than 90% of its lifetime is left.
func (s Sessions) NeedsRenewal(c Cookie, now time.Time) bool {
	left := c.Issued.Add(s.timeout()).Sub(now)
	return left < s.timeout()*9/10
}

// MaxAge is the cookie's Max-Age in seconds.
func (s Sessions) MaxAge() int { return int(s.timeout() / time.Second) }
