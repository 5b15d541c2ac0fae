package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/settee/settee/server/access"
)

// TestJWTBearer: tokens signed with a configured key name their user by
// sub and roles by the roles claim; a bad signature, an algorithm the key
// is not for (none; HS256 keyed with the RSA public key), an expired or
// not yet valid token, or a missing required claim is refused.
func TestJWTBearer(t *testing.T) {
	hsKey := []byte("hub-jwt-secret")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := &access.JWTKeys{
		HMAC:           map[string][]byte{"_default": hsKey},
		RSA:            map[string]*rsa.PublicKey{"rk": &rsaKey.PublicKey},
		EC:             map[string]*ecdsa.PublicKey{"_default": &ecKey.PublicKey},
		RequiredClaims: []string{"exp"},
	}
	ts := newHub(t, Config{JWT: keys})
	ts.must(201, "PUT", "/clinic", nil)
	ts.must(200, "PUT", "/clinic/_security", `{"members":{"roles":["nurses"]}}`)
	ts.user, ts.pass = "", ""

	now := time.Now()
	claims := func(extra map[string]any) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "nina", "exp": now.Add(time.Hour).Unix(), "_couchdb.roles": []string{"nurses"}}
		for k, v := range extra {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	sign := func(m jwt.SigningMethod, key any, c jwt.MapClaims, kid string) string {
		tok := jwt.NewWithClaims(m, c)
		if kid != "" {
			tok.Header["kid"] = kid
		}
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	bearer := func(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

	for name, tok := range map[string]string{
		"HS256": sign(jwt.SigningMethodHS256, hsKey, claims(nil), ""),
		"RS256": sign(jwt.SigningMethodRS256, rsaKey, claims(nil), "rk"),
		"ES256": sign(jwt.SigningMethodES256, ecKey, claims(nil), ""),
	} {
		m := ts.must(200, "GET", "/_session", nil, bearer(tok)...).json(t)
		if m["userCtx"].(map[string]any)["name"] != "nina" || m["info"].(map[string]any)["authenticated"] != "jwt" {
			t.Fatalf("%s: %v", name, m)
		}
		ts.putDoc("clinic", "by-"+strings.ToLower(name), map[string]any{}, bearer(tok)...)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(sign(jwt.SigningMethodHS256, hsKey, claims(nil), ""), ".")
	_, body, _ := strings.Cut(strings.TrimPrefix(sign(jwt.SigningMethodHS256, hsKey, claims(nil), ""), head), ".")
	body, _, _ = strings.Cut(body, ".")
	noneHead := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	for name, c := range map[string]struct {
		tok    string
		status int
	}{
		"bad signature":          {sign(jwt.SigningMethodHS256, []byte("other"), claims(nil), ""), 400},
		"alg none":               {noneHead + "." + body + ".", 400},
		"HS256 with the RSA key": {sign(jwt.SigningMethodHS256, pubDER, claims(nil), "rk"), 400},
		"expired":                {sign(jwt.SigningMethodHS256, hsKey, claims(map[string]any{"exp": now.Add(-time.Minute).Unix()}), ""), 401},
		"not yet valid":          {sign(jwt.SigningMethodHS256, hsKey, claims(map[string]any{"nbf": now.Add(time.Hour).Unix()}), ""), 401},
		"no exp":                 {sign(jwt.SigningMethodHS256, hsKey, claims(map[string]any{"exp": nil}), ""), 400},
		"garbage":                {"not-a-token", 400},
	} {
		r := ts.do("PUT", "/clinic/refused", "{}", bearer(c.tok)...)
		if r.status != c.status {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.body, c.status)
		}
	}
	// A token without the role is a stranger to the database.
	ts.wantReason(403, "forbidden", reasonNotMember, "GET", "/clinic", nil,
		bearer(sign(jwt.SigningMethodHS256, hsKey, claims(map[string]any{"_couchdb.roles": nil}), ""))...)
	ts.user, ts.pass = "admin", "adminpw"
	ts.wantError(404, "not_found", "GET", "/clinic/refused", nil)
}
