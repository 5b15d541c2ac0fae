package security

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/server"
	"github.com/settee/settee/server/access"
	"github.com/settee/settee/server/servertest"
)

// hubRequest sends one request with the given credentials ("user:pass",
// "cookie=VALUE", "bearer=TOKEN" or "") and returns status and body.
func hubRequest(t *testing.T, method, url, body, cred string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx(t), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	switch {
	case strings.HasPrefix(cred, "cookie="):
		req.Header.Set("Cookie", "AuthSession="+strings.TrimPrefix(cred, "cookie="))
	case strings.HasPrefix(cred, "bearer="):
		req.Header.Set("Authorization", "Bearer "+strings.TrimPrefix(cred, "bearer="))
	case cred != "":
		u, p, _ := strings.Cut(cred, ":")
		req.SetBasicAuth(u, p)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func hs256(secret []byte, claims map[string]any, alg string) string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"` + alg + `","typ":"JWT"}`))
	c, _ := json.Marshal(claims)
	payload := head + "." + base64.RawURLEncoding.EncodeToString(c)
	if alg == "none" {
		return payload + "."
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(payload))
	return payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TestHubAttacks: forged and expired session cookies, tokens with a bad
// signature, no algorithm or a past expiry, users raising their own
// rights, guessing passwords, and a member of one database reading
// another's: each refused, and nothing of the other database leaks.
func TestHubAttacks(t *testing.T) {
	rtest.Count.Scenarios.Add(1)
	secret := []byte("hub-token-secret")
	hub := servertest.Start(t, &server.Config{
		Users:              map[string]string{"root": "root-pw-1"},
		PasswordIterations: 10,
		SessionSecret:      []byte("hub-cookie-secret"),
		SessionTimeout:     2 * time.Second,
		JWT:                &access.JWTKeys{HMAC: map[string][]byte{"_default": secret}},
	})
	admin := "root:root-pw-1"
	for _, u := range []string{"alice", "mallory"} {
		if st, b := hubRequest(t, "PUT", hub.URL+"/_users/org.couchdb.user:"+u,
			`{"name":"`+u+`","password":"pw-`+u+`","roles":[],"type":"user"}`, admin); st != 201 {
			t.Fatalf("create %s: %d %s", u, st, b)
		}
	}
	for _, db := range []string{"alice-db", "mallory-db"} {
		owner := strings.TrimSuffix(db, "-db")
		hubRequest(t, "PUT", hub.URL+"/"+db, "", admin)
		hubRequest(t, "PUT", hub.URL+"/"+db+"/_security", `{"members":{"names":["`+owner+`"]}}`, admin)
	}
	if st, b := hubRequest(t, "PUT", hub.URL+"/alice-db/diary", `{"text":"alice-private-marker"}`, "alice:pw-alice"); st != 201 {
		t.Fatalf("alice writes her database: %d %s", st, b)
	}

	forgedByOtherSecret := access.Sessions{Secret: []byte("guessed"), Timeout: time.Hour}.Make("alice", "", time.Now())
	mallory := "mallory:pw-mallory"
	for name, c := range map[string]struct {
		method, path, body, cred string
		want                     int
	}{
		"forged cookie":           {"GET", "/alice-db/diary", "", "cookie=" + forgedByOtherSecret, 401},
		"garbage cookie":          {"GET", "/alice-db/diary", "", "cookie=%%%", 400},
		"token, wrong secret":     {"GET", "/alice-db/diary", "", "bearer=" + hs256([]byte("nope"), map[string]any{"sub": "alice"}, "HS256"), 400},
		"token, alg none":         {"GET", "/alice-db/diary", "", "bearer=" + hs256(nil, map[string]any{"sub": "alice"}, "none"), 400},
		"token, expired":          {"GET", "/alice-db/diary", "", "bearer=" + hs256(secret, map[string]any{"sub": "alice", "exp": time.Now().Add(-time.Hour).Unix()}, "HS256"), 401},
		"own roles":               {"PUT", "/_users/org.couchdb.user:mallory", `{"name":"mallory","roles":["_admin"],"type":"user","password":"x"}`, mallory, 403},
		"another user's document": {"PUT", "/_users/org.couchdb.user:alice", `{"name":"alice","roles":[],"type":"user","password":"x"}`, mallory, 403},
		"derived_key directly":    {"PUT", "/_users/org.couchdb.user:eve", `{"name":"eve","roles":[],"type":"user","password_scheme":"pbkdf2","iterations":1,"salt":"s","derived_key":"00"}`, "", 401},
		"other db, _all_docs":     {"GET", "/alice-db/_all_docs?include_docs=true", "", mallory, 403},
		"other db, _changes":      {"GET", "/alice-db/_changes?include_docs=true", "", mallory, 403},
		"other db, _bulk_get":     {"POST", "/alice-db/_bulk_get", `{"docs":[{"id":"diary"}]}`, mallory, 403},
		"other db, _find":         {"POST", "/alice-db/_find", `{"selector":{}}`, mallory, 403},
		"other db, open_revs":     {"GET", "/alice-db/diary?open_revs=all", "", mallory, 403},
		"other db, _security":     {"PUT", "/alice-db/_security", `{"members":{"names":["mallory"]}}`, mallory, 403},
		"server admin endpoint":   {"GET", "/_all_dbs", "", mallory, 401},
	} {
		st, body := hubRequest(t, c.method, hub.URL+c.path, c.body, c.cred)
		if st != c.want {
			t.Errorf("%s: %s %s: %d %s, want %d", name, c.method, c.path, st, body, c.want)
		}
		if strings.Contains(body, "alice-private-marker") {
			t.Errorf("%s: the answer shows alice's data: %s", name, body)
		}
	}

	// A real session cookie expires with its timeout.
	st, _ := hubRequest(t, "POST", hub.URL+"/_session", `{"name":"alice","password":"pw-alice"}`, "")
	if st != 200 {
		t.Fatalf("login: %d", st)
	}
	req, _ := http.NewRequest("POST", hub.URL+"/_session", strings.NewReader(`{"name":"alice","password":"pw-alice"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == access.CookieName {
			cookie = c.Value
		}
	}
	if st, _ := hubRequest(t, "GET", hub.URL+"/alice-db/diary", "", "cookie="+cookie); st != 200 {
		t.Fatalf("fresh cookie refused: %d", st)
	}
	time.Sleep(2100 * time.Millisecond)
	if st, _ := hubRequest(t, "GET", hub.URL+"/alice-db/diary", "", "cookie="+cookie); st != 401 {
		t.Errorf("expired cookie: %d, want 401", st)
	}

	// Guessing: five wrong passwords lock the name out from this address.
	for i := 0; i < 5; i++ {
		hubRequest(t, "GET", hub.URL+"/_session", "", fmt.Sprintf("alice:guess-%d", i))
	}
	if st, body := hubRequest(t, "GET", hub.URL+"/alice-db/diary", "", "alice:pw-alice"); st != 403 || !strings.Contains(body, "locked") {
		t.Errorf("after five guesses: %d %s, want 403 locked", st, body)
	}
	// The database is as alice left it.
	st, body := hubRequest(t, "GET", hub.URL+"/alice-db", "", admin)
	if st != 200 || !strings.Contains(body, `"doc_count":1`) {
		t.Errorf("alice's database changed: %d %s", st, body)
	}
}
