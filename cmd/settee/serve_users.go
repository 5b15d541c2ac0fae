package main

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/settee/settee/server"
	"github.com/settee/settee/server/access"
)

// hubFlags are serve's settings for a hub's users: who may read and write
// what, sessions and bearer tokens.
type hubFlags struct {
	defaultSecurity *string
	perUser         *bool
	perUserDelete   *bool
	sessionTimeout  *time.Duration
	sessionSecret   *string
	jwtSecretFile   *string
	jwtKeys         keyFiles
	jwtRoles        *string
	jwtRequire      *string
}

// keyFiles is a repeatable [KID=]FILE flag.
type keyFiles []string

func (k *keyFiles) String() string     { return strings.Join(*k, ",") }
func (k *keyFiles) Set(v string) error { *k = append(*k, v); return nil }

func addHubFlags(fset *flag.FlagSet) *hubFlags {
	h := &hubFlags{
		defaultSecurity: fset.String("default-security", "admin_only", "the `access` of new databases: admin_only (CouchDB 3's default: server admins until _security says more) or everyone"),
		perUser:         fset.Bool("peruser", false, "give every new user of _users a database of their own, userdb-HEX(name) (CouchDB's couch_peruser)"),
		perUserDelete:   fset.Bool("peruser-delete", false, "with --peruser, delete a user's database when the user is deleted"),
		sessionTimeout:  fset.Duration("session-timeout", access.DefaultSessionTimeout, "how long a session cookie lasts without use (`duration`; renewed while used)"),
		sessionSecret:   fset.String("session-secret-file", "", "sign session cookies with the secret in this `file`, so they outlive a restart (default: a new secret per start)"),
		jwtSecretFile:   fset.String("jwt-secret-file", "", "accept HS256 bearer tokens signed with the secret in this `file`"),
		jwtRoles:        fset.String("jwt-roles-claim", "", "the dotted `path` of the roles claim in bearer tokens (default: a claim named _couchdb.roles)"),
		jwtRequire:      fset.String("jwt-required-claims", "", "`claims` every bearer token must carry (comma-separated, such as exp)"),
	}
	fset.Var(&h.jwtKeys, "jwt-key", "accept RS256 or ES256 bearer tokens signed for this public key `[KID=]FILE` (PEM); repeatable")
	return h
}

// apply puts the flags into a server config.
func (h *hubFlags) apply(cfg *server.Config) error {
	switch *h.defaultSecurity {
	case "admin_only":
	case "everyone":
		cfg.DefaultSecurityEveryone = true
	default:
		return usageErrorf("--default-security %q: use admin_only or everyone", *h.defaultSecurity)
	}
	if *h.perUserDelete && !*h.perUser {
		return usageErrorf("--peruser-delete needs --peruser")
	}
	cfg.PerUser, cfg.PerUserDelete = *h.perUser, *h.perUserDelete
	if *h.sessionTimeout <= 0 {
		return usageErrorf("--session-timeout %v is not a positive duration", *h.sessionTimeout)
	}
	cfg.SessionTimeout = *h.sessionTimeout
	if *h.sessionSecret != "" {
		b, err := readSecretFile("--session-secret-file", *h.sessionSecret)
		if err != nil {
			return err
		}
		cfg.SessionSecret = b
	}
	keys := &access.JWTKeys{HMAC: map[string][]byte{}, RSA: map[string]*rsa.PublicKey{}, EC: map[string]*ecdsa.PublicKey{}}
	if *h.jwtSecretFile != "" {
		b, err := readSecretFile("--jwt-secret-file", *h.jwtSecretFile)
		if err != nil {
			return err
		}
		keys.HMAC["_default"] = b
	}
	for _, spec := range h.jwtKeys {
		kid, file, ok := strings.Cut(spec, "=")
		if !ok {
			kid, file = "_default", spec
		}
		pem, err := os.ReadFile(file)
		if err != nil {
			return usageErrorf("--jwt-key: %v", err)
		}
		if k, err := jwt.ParseRSAPublicKeyFromPEM(pem); err == nil {
			keys.RSA[kid] = k
		} else if k, err := jwt.ParseECPublicKeyFromPEM(pem); err == nil {
			keys.EC[kid] = k
		} else {
			return usageErrorf("--jwt-key %s: not an RSA or EC public key in PEM", file)
		}
	}
	keys.RolesClaimPath = *h.jwtRoles
	for _, c := range strings.Split(*h.jwtRequire, ",") {
		if c = strings.TrimSpace(c); c != "" {
			keys.RequiredClaims = append(keys.RequiredClaims, c)
		}
	}
	if !keys.Empty() {
		cfg.JWT = keys
	} else if *h.jwtRoles != "" || *h.jwtRequire != "" {
		return usageErrorf("--jwt-roles-claim and --jwt-required-claims need --jwt-secret-file or --jwt-key")
	}
	return nil
}

// readSecretFile reads a secret, refusing an empty one; the secret is
// kept out of every message.
func readSecretFile(flagName, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("%s: %v", flagName, err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return nil, usageErrorf("%s: %s is empty", flagName, path)
	}
	addSecret(s)
	return []byte(s), nil
}

// hubNote tells, when serve starts, how users reach the hub.
func hubNote(cfg server.Config) string {
	if len(cfg.Users) == 0 || cfg.DataDir == "" {
		return ""
	}
	open := "admin only"
	if cfg.DefaultSecurityEveryone {
		open = "everyone"
	}
	return fmt.Sprintf("users in _users (new databases: %s)", open)
}
