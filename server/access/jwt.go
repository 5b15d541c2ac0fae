package access

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/settee/settee/couchdoc"
)

// JWTKeys verifies bearer tokens as CouchDB's jwt_authentication_handler
// with its [jwt_keys] section: each key is found by the token's kind of
// algorithm and its "kid" ("_default" without one), so a token signed
// with HS256 is never checked against an RSA or EC public key.
type JWTKeys struct {
	// HMAC secrets by kid ("hmac:KID" in CouchDB's ini).
	HMAC map[string][]byte
	// RSA public keys by kid ("rsa:KID").
	RSA map[string]*rsa.PublicKey
	// EC public keys by kid ("ec:KID").
	EC map[string]*ecdsa.PublicKey
	// RequiredClaims must be present ([jwt_auth] required_claims); exp
	// and nbf are checked whenever present.
	RequiredClaims []string
	// RolesClaimPath is the dotted path of the roles claim
	// ([jwt_auth] roles_claim_path); empty means a claim named
	// "_couchdb.roles", CouchDB's default roles_claim_name.
	RolesClaimPath string
}

// Empty reports whether no key is configured (JWT is off).
func (k *JWTKeys) Empty() bool {
	return k == nil || len(k.HMAC)+len(k.RSA)+len(k.EC) == 0
}

func jwtBad(reason string) error {
	return couchdoc.Errorf(couchdoc.ErrBadRequest, "%s", reason)
}

func jwtUnauthorized(reason string) error {
	return couchdoc.Errorf(couchdoc.ErrUnauthorized, "%s", reason)
}

var allowedAlgs = map[string]string{
	"HS256": "hmac", "HS384": "hmac", "HS512": "hmac",
	"RS256": "rsa", "RS384": "rsa", "RS512": "rsa",
	"ES256": "ec", "ES384": "ec", "ES512": "ec",
}

func decodeSegment(s string) (map[string]json.RawMessage, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// Verify checks token in CouchDB's order (header, claims, then the
// signature) and returns the user it names: sub as the name, the roles
// claim as roles. Errors are CouchDB's 400 and 401 answers (jwtf), with
// one difference: exp and nbf are checked whenever present, where CouchDB
// checks only the claims it is told to require.
func (k *JWTKeys) Verify(token string, now time.Time) (UserCtx, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return UserCtx{}, jwtBad("Malformed token")
	}
	header, err := decodeSegment(parts[0])
	if err != nil {
		return UserCtx{}, jwtBad("Malformed token")
	}
	if typ, ok := header["typ"]; ok {
		var t string
		if json.Unmarshal(typ, &t) != nil || t != "JWT" {
			return UserCtx{}, jwtBad("Invalid typ header parameter")
		}
	}
	var alg string
	if raw, ok := header["alg"]; !ok {
		return UserCtx{}, jwtBad("Missing alg header parameter")
	} else if json.Unmarshal(raw, &alg) != nil || allowedAlgs[alg] == "" {
		return UserCtx{}, jwtBad("Invalid alg header parameter")
	}
	claims, err := decodeSegment(parts[1])
	if err != nil {
		return UserCtx{}, jwtBad("Malformed token")
	}
	if err := k.checkClaims(claims, now); err != nil {
		return UserCtx{}, err
	}
	key, err := k.key(alg, header)
	if err != nil {
		return UserCtx{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[2], "="))
	if err == nil {
		err = jwt.GetSigningMethod(alg).Verify(parts[0]+"."+parts[1], sig, key)
	}
	if err != nil {
		if allowedAlgs[alg] == "hmac" {
			return UserCtx{}, jwtBad("Bad HMAC")
		}
		return UserCtx{}, jwtBad("Bad signature")
	}
	var sub string
	if json.Unmarshal(claims["sub"], &sub) != nil || sub == "" {
		return UserCtx{}, jwtUnauthorized("Token missing sub claim.")
	}
	roles, err := k.roles(claims)
	if err != nil {
		return UserCtx{}, err
	}
	return UserCtx{Name: sub, Roles: roles}, nil
}

func (k *JWTKeys) checkClaims(claims map[string]json.RawMessage, now time.Time) error {
	for _, c := range k.RequiredClaims {
		if _, ok := claims[c]; !ok {
			return jwtBad("Missing " + c + " claim")
		}
	}
	// A time claim that is not a number is not checked, as CouchDB.
	number := func(name string) (float64, bool) {
		var v float64
		raw, ok := claims[name]
		return v, ok && json.Unmarshal(raw, &v) == nil
	}
	t := float64(now.Unix())
	if v, ok := number("nbf"); ok && v > t {
		return jwtUnauthorized("nbf not in past")
	}
	if v, ok := number("exp"); ok && v <= t {
		return jwtUnauthorized("exp not in future")
	}
	return nil
}

func (k *JWTKeys) key(alg string, header map[string]json.RawMessage) (any, error) {
	kid := "_default"
	if raw, ok := header["kid"]; ok {
		if json.Unmarshal(raw, &kid) != nil {
			return nil, jwtBad("Unknown kid")
		}
	}
	var key any
	var ok bool
	switch allowedAlgs[alg] {
	case "hmac":
		key, ok = k.HMAC[kid]
	case "rsa":
		key, ok = k.RSA[kid]
	case "ec":
		key, ok = k.EC[kid]
	}
	if !ok {
		return nil, jwtBad("Unknown kid")
	}
	return key, nil
}

// roles reads the roles claim: a claim named "_couchdb.roles", or the
// value at RolesClaimPath, which CouchDB then requires (404 "missing json
// key" without it). A string is a comma-separated list; other values
// than strings are a malformed token.
func (k *JWTKeys) roles(claims map[string]json.RawMessage) ([]string, error) {
	raw, ok := claims["_couchdb.roles"]
	if k.RolesClaimPath != "" {
		cur := claims
		path := strings.Split(k.RolesClaimPath, ".")
		for i, p := range path {
			v, found := cur[p]
			if !found {
				return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing json key: %s", p)
			}
			if i == len(path)-1 {
				raw, ok = v, true
				break
			}
			cur = nil
			if json.Unmarshal(v, &cur) != nil || cur == nil {
				return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "json_mismatch")
			}
		}
	}
	roles := []string{}
	if !ok {
		return roles, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		for _, r := range strings.Split(s, ",") {
			if r = strings.TrimSpace(r); r != "" {
				roles = append(roles, r)
			}
		}
		return roles, nil
	}
	if json.Unmarshal(raw, &roles) != nil {
		return nil, jwtBad("Malformed token")
	}
	return roles, nil
}
