package server

import (
	"testing"

	"github.com/settee/settee/server/access"
)

// TestCouchDB35VDUUsers replays CouchDB 3.5.0's answers on
// validate_doc_update as users meet it (testdata/couchdb35-extra,
// vdu-users.json): the userCtx and secObj a validator gets for a member,
// a database admin, the server admin, a JWT user, a cookie user and
// anonymous, on every write path, and role and owner checks.
func TestCouchDB35VDUUsers(t *testing.T) {
	t.Parallel()
	script, exchanges := readAuthScript(t, "vdu-users")
	ts := newTServer(t, Config{
		Users:              map[string]string{"admin": "pw"},
		SessionSecret:      []byte("settee-cookie-secret"),
		PasswordIterations: authIterations,
		JWT: &access.JWTKeys{
			HMAC:           map[string][]byte{"_default": []byte(script.JWTKeys["hmac"])},
			RequiredClaims: []string{"exp"},
			RolesClaimPath: "_couchdb.roles",
		},
	})
	newAuthReplay(t, ts.url, script).replay(exchanges, "couchdb35-extra/vdu-users")
}

// TestCouchDB35DesignFuncs replays CouchDB 3.5.0's answers on what design
// functions may do to their arguments (testdata/couchdb35-extra,
// design-funcs.json): map functions get the document frozen, all of them
// the same one; filters, validators and reduces may change theirs.
func TestCouchDB35DesignFuncs(t *testing.T) {
	t.Parallel()
	script, exchanges := readAuthScript(t, "design-funcs")
	ts := newTServer(t, Config{Users: map[string]string{"admin": "pw"}, PasswordIterations: authIterations})
	newAuthReplay(t, ts.url, script).replay(exchanges, "couchdb35-extra/design-funcs")
}
