package server

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsersDatabase: the admin creates users; the password is replaced by
// its PBKDF2 hash and is nowhere on disk; the user signs in with it;
// _users stays admin-only, as CouchDB 3.5's stock configuration.
func TestUsersDatabase(t *testing.T) {
	dir := t.TempDir()
	ts := newHub(t, Config{DataDir: dir})
	ts.createUser("alice", "plain-pw-marker", []string{"staff"})
	doc := ts.must(200, "GET", "/_users/org.couchdb.user:alice", nil).json(t)
	if _, ok := doc["password"]; ok {
		t.Fatalf("password kept: %v", doc)
	}
	for _, k := range []string{"salt", "derived_key"} {
		if s, _ := doc[k].(string); len(s) < 32 {
			t.Fatalf("%s missing: %v", k, doc)
		}
	}
	if doc["password_scheme"] != "pbkdf2" || doc["pbkdf2_prf"] != "sha256" || doc["iterations"] != float64(10) {
		t.Fatalf("hash fields: %v", doc)
	}
	ts.user, ts.pass = "alice", "plain-pw-marker"
	if m := ts.must(200, "GET", "/_session", nil).json(t); m["userCtx"].(map[string]any)["name"] != "alice" {
		t.Fatalf("alice's session: %v", m)
	}
	ts.wantReason(403, "forbidden", reasonNotMember, "GET", "/_users/org.couchdb.user:alice", nil)
	ts.wantReason(403, "forbidden", reasonNotMember, "PUT", "/_users/org.couchdb.user:alice",
		map[string]any{"name": "alice", "password": "x", "roles": []string{}, "type": "user"})
	ts.user, ts.pass = "alice", "wrong"
	ts.wantReason(401, "unauthorized", "Name or password is incorrect.", "GET", "/_session", nil)
	ts.user, ts.pass = "", ""
	ts.wantReason(401, "unauthorized", reasonNotMemberAnon, "PUT", "/_users/org.couchdb.user:eve",
		map[string]any{"name": "eve", "password": "x", "roles": []string{}, "type": "user"})

	// CouchDB's rules of user documents, for the admin too.
	ts.user, ts.pass = "admin", "adminpw"
	for body, reason := range map[string]string{
		`{"name":"bob","roles":[],"type":"person"}`:                          "doc.type must be user",
		`{"name":"carol","roles":[],"type":"user"}`:                          "Doc ID must be of the form org.couchdb.user:name",
		`{"name":"bob","type":"user"}`:                                       "doc.roles must exist",
		`{"name":"bob","roles":"x","type":"user"}`:                           "doc.roles must be an array",
		`{"name":"bob","roles":[1],"type":"user"}`:                           "doc.roles can only contain strings",
		`{"name":"bob","roles":["_admin"],"type":"user"}`:                    "No system roles (starting with underscore) in users db.",
		`{"roles":[],"type":"user"}`:                                         "doc.name is required",
		`{"name":"bob","roles":[],"type":"user","password_scheme":"pbkdf2"}`: "iterations must be a number.",
	} {
		ts.wantReason(403, "forbidden", reason, "PUT", "/_users/org.couchdb.user:bob", body)
	}
	rev := ts.must(200, "GET", "/_users/org.couchdb.user:alice", nil).json(t)["_rev"].(string)
	ts.wantReason(403, "forbidden", "Doc ID must be of the form org.couchdb.user:name", "PUT", "/_users/org.couchdb.user:alice?rev="+rev,
		`{"name":"alicia","roles":[],"type":"user"}`)
	r := ts.do("POST", "/_users/_bulk_docs", `{"docs":[{"_id":"org.couchdb.user:dan","name":"dan","roles":[],"type":"user","password":"bulk-pw-marker"},{"_id":"org.couchdb.user:x","name":"y","roles":[],"type":"user"}]}`)
	if r.status != 201 || !strings.Contains(string(r.body), `"error":"forbidden"`) || !strings.Contains(string(r.body), `"ok":true`) {
		t.Fatalf("_bulk_docs into _users: %d %s", r.status, r.body)
	}
	ts.user, ts.pass = "dan", "bulk-pw-marker"
	ts.must(200, "GET", "/_session", nil)

	// The plaintext passwords are in no file the server wrote.
	if err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		for _, marker := range []string{"plain-pw-marker", "bulk-pw-marker"} {
			if bytes.Contains(b, []byte(marker)) {
				t.Errorf("%s holds a plaintext password", path)
			}
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSecurityObject: _security is read by members, written by db admins,
// validated as CouchDB does, and decides who reads and writes documents.
func TestSecurityObject(t *testing.T) {
	ts := newHub(t, Config{})
	ts.createUser("alice", "a", []string{"nurses"})
	ts.createUser("bob", "b", nil)
	ts.createUser("carol", "c", []string{"leads"})
	ts.must(201, "PUT", "/ward", nil)
	if m := ts.must(200, "GET", "/ward/_security", nil).json(t); m["members"].(map[string]any)["roles"].([]any)[0] != "_admin" {
		t.Fatalf("new database's security: %v", m)
	}
	for _, bad := range []string{`[]`, `{"admins":[]}`, `{"members":{"names":"x"}}`, `{"members":{"roles":[1]}}`, `nope`} {
		ts.wantError(400, "bad_request", "PUT", "/ward/_security", bad)
	}
	ts.must(200, "PUT", "/ward/_security", `{"admins":{"roles":["leads"]},"members":{"roles":["nurses"]},"note":"kept"}`)
	if r := ts.must(200, "GET", "/ward/_security", nil); !strings.Contains(string(r.body), `"note":"kept"`) {
		t.Fatalf("security object not kept as written: %s", r.body)
	}
	ts.user, ts.pass = "alice", "a" // a member by role
	ts.putDoc("ward", "chart", map[string]any{"by": "alice"})
	ts.must(200, "GET", "/ward/_security", nil)
	ts.wantReason(403, "forbidden", reasonNotDBAdmin, "PUT", "/ward/_security", `{}`)
	ts.wantReason(403, "forbidden", reasonNotDBAdmin, "PUT", "/ward/_design/app", `{}`)
	ts.wantReason(403, "forbidden", reasonNotDBAdmin, "POST", "/ward", `{"_id":"_design/app"}`)
	ts.wantReason(403, "forbidden", reasonNotDBAdmin, "COPY", "/ward/chart", nil, "Destination", "_design/app")
	r := ts.must(201, "POST", "/ward/_bulk_docs", `{"docs":[{"_id":"_design/app"},{"_id":"note"}]}`)
	if !strings.Contains(string(r.body), `{"id":"_design/app","error":"forbidden","reason":"`+reasonNotDBAdmin+`"}`) {
		t.Fatalf("_bulk_docs with a design doc by a member: %s", r.body)
	}
	ts.user, ts.pass = "bob", "b" // no role: a stranger
	ts.wantReason(403, "forbidden", reasonNotMember, "GET", "/ward/chart", nil)
	ts.wantReason(403, "forbidden", reasonNotMember, "GET", "/ward/_changes", nil)
	ts.user, ts.pass = "carol", "c" // a db admin by role
	ts.must(201, "PUT", "/ward/_design/app", `{}`)
	ts.must(200, "PUT", "/ward/_security", `{"admins":{"names":["carol"]},"members":{"names":["bob"]}}`)
	ts.user, ts.pass = "alice", "a"
	ts.wantReason(403, "forbidden", reasonNotMember, "GET", "/ward", nil)
	ts.user, ts.pass = "bob", "b"
	ts.must(200, "GET", "/ward/chart", nil)
	ts.user, ts.pass = "", ""
	ts.wantReason(401, "unauthorized", reasonNotMemberAnon, "GET", "/ward/chart", nil)
	// The _users database's security object is not for editing.
	ts.user, ts.pass = "admin", "adminpw"
	ts.wantError(403, "forbidden", "PUT", "/_users/_security", `{}`)
}

// TestDefaultSecurityEveryone: with the older default, new databases are
// open to every user, anonymous ones included, but design documents
// still need an admin.
func TestDefaultSecurityEveryone(t *testing.T) {
	ts := newHub(t, Config{DefaultSecurityEveryone: true})
	ts.must(201, "PUT", "/open", nil)
	ts.user, ts.pass = "", ""
	ts.putDoc("open", "x", map[string]any{})
	ts.wantReason(401, "unauthorized", reasonNotDBAdmin, "PUT", "/open/_design/d", `{}`)
	ts.wantReason(401, "unauthorized", reasonNotServerAdmin, "DELETE", "/open", nil)
}

// TestPasswordChangeEndsSessions: a session cookie is signed with the
// user's salt, so a new password ends it.
func TestPasswordChangeEndsSessions(t *testing.T) {
	ts := newHub(t, Config{})
	rev := ts.createUser("alice", "old", nil)
	ts.user, ts.pass = "", ""
	r := ts.must(200, "POST", "/_session", map[string]string{"name": "alice", "password": "old"})
	cookie := sessionCookie(t, r)
	ts.must(200, "GET", "/_session", nil, "Cookie", cookie)
	if m := ts.must(200, "GET", "/_session", nil, "Cookie", cookie).json(t); m["userCtx"].(map[string]any)["name"] != "alice" {
		t.Fatalf("cookie session: %v", m)
	}
	ts.user, ts.pass = "admin", "adminpw"
	ts.must(201, "PUT", "/_users/org.couchdb.user:alice?rev="+rev, map[string]any{"name": "alice", "password": "new", "roles": []string{}, "type": "user"})
	ts.user, ts.pass = "", ""
	if m := ts.must(200, "GET", "/_session", nil, "Cookie", cookie).json(t); m["userCtx"].(map[string]any)["name"] != nil {
		t.Fatalf("old session still valid after a password change: %v", m)
	}
	ts.user, ts.pass = "alice", "old"
	ts.wantError(401, "unauthorized", "GET", "/_session", nil)
	ts.user, ts.pass = "alice", "new"
	ts.must(200, "GET", "/_session", nil)
}

func sessionCookie(t *testing.T, r resp) string {
	t.Helper()
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "AuthSession" && c.Value != "" {
			return "AuthSession=" + c.Value
		}
	}
	t.Fatalf("no AuthSession cookie in %v", r.header)
	return ""
}

// TestLockout: after five wrong passwords from one address, even the
// right one is refused for a while (CouchDB 3.5's chttpd_auth_lockout);
// another user is not affected.
func TestLockout(t *testing.T) {
	ts := newHub(t, Config{})
	ts.createUser("alice", "right", nil)
	ts.createUser("bob", "b", nil)
	ts.user = "alice"
	for i := 0; i < 5; i++ {
		ts.pass = "wrong"
		ts.wantError(401, "unauthorized", "GET", "/_session", nil)
	}
	ts.pass = "right"
	ts.wantError(403, "forbidden", "GET", "/_session", nil)
	ts.wantError(403, "forbidden", "POST", "/_session", map[string]string{"name": "alice", "password": "right"})
	ts.user, ts.pass = "bob", "b"
	ts.must(200, "GET", "/_session", nil)
}

// TestPerUserDatabases: with PerUser a new user gets userdb-HEX(name),
// theirs alone; with PerUserDelete it goes with the user.
func TestPerUserDatabases(t *testing.T) {
	ts := newHub(t, Config{PerUser: true, PerUserDelete: true})
	rev := ts.createUser("alice", "a", nil)
	ts.createUser("bob", "b", nil)
	db := "/userdb-" + hex.EncodeToString([]byte("alice"))
	ts.user, ts.pass = "alice", "a"
	ts.putDoc(db[1:], "mine", map[string]any{})
	ts.user, ts.pass = "bob", "b"
	ts.wantReason(403, "forbidden", reasonNotMember, "GET", db+"/mine", nil)
	ts.user, ts.pass = "admin", "adminpw"
	ts.must(200, "DELETE", "/_users/org.couchdb.user:alice?rev="+rev, nil)
	ts.wantError(404, "not_found", "GET", db, nil)
}
