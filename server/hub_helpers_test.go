package server

import (
	"testing"
)

// newHub starts a server with the admin "admin" (password "adminpw") over
// a data directory: a hub with a _users database. Passwords are hashed
// with few PBKDF2 rounds to keep tests fast.
func newHub(t testing.TB, cfg Config) *tserver {
	t.Helper()
	if cfg.Users == nil {
		cfg.Users = map[string]string{"admin": "adminpw"}
	}
	if cfg.PasswordIterations == 0 {
		cfg.PasswordIterations = 10
	}
	ts := newTServer(t, cfg)
	ts.user, ts.pass = "admin", "adminpw"
	return ts
}

// createUser adds a user to _users as the admin.
func (ts *tserver) createUser(name, password string, roles []string) string {
	ts.t.Helper()
	if roles == nil {
		roles = []string{}
	}
	u, p := ts.user, ts.pass
	ts.user, ts.pass = "admin", "adminpw"
	defer func() { ts.user, ts.pass = u, p }()
	r := ts.must(201, "PUT", "/_users/org.couchdb.user:"+name, map[string]any{
		"name": name, "password": password, "roles": roles, "type": "user",
	})
	return r.json(ts.t)["rev"].(string)
}
