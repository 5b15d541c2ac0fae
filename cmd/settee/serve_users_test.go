package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hub flags refuse what cannot work, with exit 2 and a message that
// names the flag, before anything is served.
func TestServeHubFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(t.TempDir(), "pw")
	empty := filepath.Join(t.TempDir(), "empty")
	notKey := filepath.Join(t.TempDir(), "not-a-key.pem")
	for _, f := range []string{pw, notKey} {
		if err := os.WriteFile(f, []byte("secret-value\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--default-security", "members"}, "--default-security"},
		{[]string{"--peruser-delete"}, "--peruser-delete needs --peruser"},
		{[]string{"--session-timeout", "-1s"}, "--session-timeout"},
		{[]string{"--jwt-secret-file", empty}, "is empty"},
		{[]string{"--jwt-key", notKey}, "not an RSA or EC public key"},
		{[]string{"--jwt-required-claims", "exp"}, "need --jwt-secret-file or --jwt-key"},
	} {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--user", "admin", "--password-file", pw}, c.args...)
		r := cli(t, nil, append(args, dir)...)
		failsWith(t, r, 2, c.want)
		if strings.Contains(r.stderr, "secret-value") {
			t.Errorf("%v: a secret in the message: %s", c.args, r.stderr)
		}
	}
}

// serve with a JWT secret and --peruser, as a team's hub with an identity
// provider: a token signed with the secret reaches the user's own
// database, which serve made when the admin created the user.
func TestServeHubJWTAndPerUser(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(t.TempDir(), "pw")
	jwtSecret := filepath.Join(t.TempDir(), "jwt")
	if err := os.WriteFile(pw, []byte("hub-admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jwtSecret, []byte("idp-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	printed, url := serveLines(t, "--user", "admin", "--password-file", pw, "--peruser",
		"--jwt-secret-file", jwtSecret, "--jwt-required-claims", "exp", dir)
	if !strings.Contains(printed, "users in _users (new databases: admin only)") {
		t.Errorf("serve did not say how users reach it: %q", printed)
	}
	sendAuth(t, "PUT", url+"/_users/org.couchdb.user:ana", `{"name":"ana","password":"ana-pw","roles":[],"type":"user"}`, "admin", "hub-admin", 201)
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"sub": "ana", "exp": time.Now().Add(time.Hour).Unix()})
	signing := head + "." + base64.RawURLEncoding.EncodeToString(claims)
	m := hmac.New(sha256.New, []byte("idp-secret"))
	m.Write([]byte(signing))
	token := signing + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
	req, _ := http.NewRequest("PUT", url+"/userdb-616e61/visit", strings.NewReader(`{"site":"north"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Fatalf("ana's token writing her own database: %d", res.StatusCode)
	}
}
