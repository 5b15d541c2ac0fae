package access

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

func TestSecurityObjects(t *testing.T) {
	for _, bad := range []string{`[]`, `"x"`, `null`, `{"admins":[]}`, `{"members":null}`,
		`{"members":{"names":"ann"}}`, `{"members":{"roles":[1]}}`, `{"admins":{"names":[null]}}`} {
		if _, err := ParseSecurity([]byte(bad)); !errors.Is(err, ErrBadSecurity) {
			t.Errorf("ParseSecurity(%s) = %v, want ErrBadSecurity", bad, err)
		}
	}
	sec, err := ParseSecurity([]byte(`{"admins":{"names":["ada"],"roles":["leads"]},"readers":{"roles":["staff"]},"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(sec.Raw) != `{"admins":{"names":["ada"],"roles":["leads"]},"readers":{"roles":["staff"]},"x":1}` {
		t.Errorf("Raw not kept: %s", sec.Raw)
	}
	ann, staff, lead, ada, root := UserCtx{Name: "ann"}, UserCtx{Name: "sam", Roles: []string{"staff"}},
		UserCtx{Name: "lee", Roles: []string{"leads"}}, UserCtx{Name: "ada"}, Admin("root")
	for _, c := range []struct {
		u             UserCtx
		member, admin bool
	}{{ann, false, false}, {staff, true, false}, {lead, true, true}, {ada, true, true}, {root, true, true}, {Anonymous, false, false}} {
		if sec.IsMember(c.u) != c.member || sec.IsAdmin(c.u) != c.admin {
			t.Errorf("%+v: member %v admin %v, want %v %v", c.u, sec.IsMember(c.u), sec.IsAdmin(c.u), c.member, c.admin)
		}
	}
	if !Everyone.IsMember(Anonymous) || Everyone.IsAdmin(ann) || AdminOnly.IsMember(ann) || !AdminOnly.IsMember(root) {
		t.Error("the default objects do not say what CouchDB's do")
	}
}

func userDoc(id, body string) *couchdoc.Doc {
	return &couchdoc.Doc{ID: id, Body: json.RawMessage(body)}
}

// The _users rules for users who are not admins (an opened _users
// database): their own document only, no roles, no renaming.
func TestUserDocRulesForUsers(t *testing.T) {
	open := Everyone
	ann := UserCtx{Name: "ann", Roles: []string{}}
	old := userDoc(UserPrefix+"ann", `{"name":"ann","type":"user","roles":["staff"]}`)
	for _, c := range []struct {
		doc    *couchdoc.Doc
		old    *couchdoc.Doc
		u      UserCtx
		reason string
	}{
		{userDoc(UserPrefix+"bob", `{"name":"bob","type":"user","roles":[]}`), userDoc(UserPrefix+"bob", `{"name":"bob","type":"user","roles":[]}`), ann, "missing"},
		{userDoc(UserPrefix+"ann", `{"name":"ann","type":"user","roles":["staff","boss"]}`), old, ann, "Only _admin may edit roles"},
		{userDoc(UserPrefix+"eve", `{"name":"eve","type":"user","roles":["x"]}`), nil, Anonymous, "Only _admin may set roles"},
		{userDoc(UserPrefix+"_x", `{"name":"_x","type":"user","roles":[]}`), nil, Anonymous, "Username may not start with underscore."},
		{userDoc(UserPrefix+"a:b", `{"name":"a:b","type":"user","roles":[]}`), nil, Anonymous, "Character `:` is not allowed in usernames."},
		{&couchdoc.Doc{ID: UserPrefix + "bob", Deleted: true}, userDoc(UserPrefix+"bob", `{"name":"bob"}`), ann, "Only admins may delete other user docs."},
		{userDoc("_design/x", `{}`), nil, ann, "Only administrators can write design docs in the users database."},
	} {
		err := PrepareUserDoc(c.doc, c.old, c.u, open, 1)
		var ce *couchdoc.Error
		if !errors.As(err, &ce) || ce.Reason != c.reason {
			t.Errorf("%s by %q: %v, want %q", c.doc.ID, c.u.Name, err, c.reason)
		}
	}
	// Allowed: a sign-up without roles, the owner's new password (hashed),
	// the owner deleting their document.
	signup := userDoc(UserPrefix+"eve", `{"name":"eve","type":"user","roles":[],"password":"pw-eve"}`)
	if err := PrepareUserDoc(signup, nil, Anonymous, open, 1); err != nil || strings.Contains(string(signup.Body), "pw-eve") {
		t.Fatalf("sign-up: %v %s", err, signup.Body)
	}
	u, ok := ParseUser(signup)
	if !ok || !NewVerifier(0).Verify("eve", "pw-eve", u.Hash) || NewVerifier(0).Verify("eve", "pw-ev", u.Hash) {
		t.Fatalf("the stored hash does not verify the password: %+v", u)
	}
	mine := userDoc(UserPrefix+"ann", `{"name":"ann","type":"user","roles":["staff"],"password":"new"}`)
	if err := PrepareUserDoc(mine, old, ann, open, 1); err != nil {
		t.Fatalf("own password: %v", err)
	}
	if err := PrepareUserDoc(&couchdoc.Doc{ID: UserPrefix + "ann", Deleted: true}, old, ann, open, 1); err != nil {
		t.Fatalf("own deletion: %v", err)
	}
}

// A verified password is remembered: the same credentials again cost no
// PBKDF2 run, a wrong password or a new hash (a password change) does.
func TestVerifierRemembers(t *testing.T) {
	v := NewVerifier(2)
	h := HashPassword("right", 1000)
	for i := 0; i < 5; i++ {
		if !v.Verify("ann", "right", h) {
			t.Fatal("right password refused")
		}
	}
	if n := v.slow.Load(); n != 1 {
		t.Fatalf("%d PBKDF2 runs for five checks of the same credentials, want 1", n)
	}
	if v.Verify("ann", "wrong", h) || v.slow.Load() != 2 {
		t.Fatal("a wrong password skipped the check")
	}
	h2 := HashPassword("right", 1000) // the same password, a new salt
	if !v.Verify("ann", "right", h2) || v.slow.Load() != 3 {
		t.Fatal("a new hash was taken from the cache")
	}
	v.Verify("bob", "x", HashPassword("x", 10))
	v.Verify("cy", "y", HashPassword("y", 10))
	if len(v.ok) > 2 {
		t.Fatalf("cache holds %d entries, bound 2", len(v.ok))
	}
}

func TestLockoutWindow(t *testing.T) {
	l := &Lockout{Threshold: 3, Lifetime: time.Minute}
	now := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if l.Locked("1.2.3.4", "ann", now) {
			t.Fatalf("locked after %d failures", i)
		}
		l.Fail("1.2.3.4", "ann", now)
	}
	if !l.Locked("1.2.3.4", "ann", now) || l.Locked("5.6.7.8", "ann", now) || l.Locked("1.2.3.4", "bob", now) {
		t.Fatal("the lockout is not per address and name")
	}
	if l.Locked("1.2.3.4", "ann", now.Add(time.Minute)) {
		t.Fatal("still locked after the window")
	}
}

func TestJWTRolesClaim(t *testing.T) {
	k := &JWTKeys{RolesClaimPath: "app.roles"}
	for claims, want := range map[string]string{
		`{"app":{"roles":["a","b"]}}`: "a,b",
		`{"app":{"roles":"a, b"}}`:    "a,b",
	} {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(claims), &m)
		roles, err := k.roles(m)
		if err != nil || strings.Join(roles, ",") != want {
			t.Errorf("%s: %v %v, want %s", claims, roles, err, want)
		}
	}
	for claims, status := range map[string]int{`{}`: 404, `{"app":"x"}`: 404, `{"app":{"roles":[1]}}`: 400} {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(claims), &m)
		_, err := k.roles(m)
		var ce *couchdoc.Error
		if !errors.As(err, &ce) || ce.Status != status {
			t.Errorf("%s: %v, want status %d", claims, err, status)
		}
	}
}
