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
// claim as roles. Errors are CouchDB's 400 and 401 answers.
func (k *JWTKeys) Verify(token string, now time.Time) (UserCtx, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return UserCtx{}, jwtBad("Malformed token")
	}
	header, err := decodeSegment(parts[0])
	if err != nil {
		return UserCtx{}, jwtBad("Invalid header")
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
		return UserCtx{}, jwtBad("Invalid payload")
	}
	if err := k.checkClaims(claims, now); err != nil {
		return UserCtx{}, err
	}
	key, err := k.key(alg, header)
	if err != nil {
		return UserCtx{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[2], "="))
	if err != nil {
		return UserCtx{}, jwtBad("Invalid signature")
	}
	if err := jwt.GetSigningMethod(alg).Verify(parts[0]+"."+parts[1], sig, key); err != nil {
		return UserCtx{}, jwtBad("Invalid signature")
	}
	var sub string
	if json.Unmarshal(claims["sub"], &sub) != nil || sub == "" {
		return UserCtx{}, jwtUnauthorized("Token missing sub claim.")
	}
	return UserCtx{Name: sub, Roles: k.roles(claims)}, nil
}

func (k *JWTKeys) checkClaims(claims map[string]json.RawMessage, now time.Time) error {
	for _, c := range k.RequiredClaims {
		if _, ok := claims[c]; !ok {
			return jwtBad("Missing " + c + " claim")
		}
	}
	number := func(name string) (float64, bool, error) {
		raw, ok := claims[name]
		if !ok {
			return 0, false, nil
		}
		var v float64
		if json.Unmarshal(raw, &v) != nil {
			return 0, true, jwtBad("Invalid " + name + " claim")
		}
		return v, true, nil
	}
	t := float64(now.Unix())
	if v, ok, err := number("iat"); err != nil {
		return err
	} else if ok && v > t {
		return jwtUnauthorized("iat not in past")
	}
	if v, ok, err := number("nbf"); err != nil {
		return err
	} else if ok && v > t {
		return jwtUnauthorized("nbf not in past")
	}
	if v, ok, err := number("exp"); err != nil {
		return err
	} else if ok && v <= t {
		return jwtUnauthorized("exp not in future")
	}
	return nil
}

func (k *JWTKeys) key(alg string, header map[string]json.RawMessage) (any, error) {
	kid := "_default"
	if raw, ok := header["kid"]; ok {
		if json.Unmarshal(raw, &kid) != nil {
			return nil, jwtBad("Invalid kid header parameter")
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

// roles reads the roles claim: a list of strings at RolesClaimPath.
func (k *JWTKeys) roles(claims map[string]json.RawMessage) []string {
	raw, ok := claims["_couchdb.roles"]
	if k.RolesClaimPath != "" {
		ok = false
		cur := claims
		path := strings.Split(k.RolesClaimPath, ".")
		for i, p := range path {
			v, found := cur[p]
			if !found {
				break
			}
			if i == len(path)-1 {
				raw, ok = v, true
				break
			}
			if json.Unmarshal(v, &cur) != nil {
				break
			}
		}
	}
	roles := []string{}
	if ok {
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			roles = list
		}
	}
	return roles
}
