package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/settee/settee/internal/couchcorpus"
	"github.com/settee/settee/server/access"
)

// TestCouchDB35VDUUsers replays CouchDB 3.5.0's answers on
// validate_doc_update as users meet it (testdata/couchdb35-extra,
// vdu-users.json): the userCtx and secObj a validator gets for a member,
// a database admin, the server admin, a JWT user, a cookie user and
// anonymous, on every write path, and role and owner checks.
func TestCouchDB35VDUUsers(t *testing.T) {
	t.Parallel()
	var script authScript
	if err := json.Unmarshal(readFile(t, authDir+"vdu-users.json"), &script); err != nil {
		t.Fatal(err)
	}
	exchanges, err := couchcorpus.ReadExchanges(authDir + "vdu-users.jsonl")
	if err != nil {
		t.Fatal(err)
	}
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
	rp := &authReplay{t: t, base: ts.url, script: script, cookies: map[string]string{},
		saved: map[string]any{}, mapper: couchcorpus.NewMapper(),
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	rp.replay(exchanges, "couchdb35-extra/vdu-users")
}

// TestCouchDB35DesignFuncs replays CouchDB 3.5.0's answers on what design
// functions may do to their arguments (testdata/couchdb35-extra,
// design-funcs.json): map functions get the document frozen, all of them
// the same one; filters, validators and reduces may change theirs.
func TestCouchDB35DesignFuncs(t *testing.T) {
	t.Parallel()
	var script authScript
	if err := json.Unmarshal(readFile(t, authDir+"design-funcs.json"), &script); err != nil {
		t.Fatal(err)
	}
	exchanges, err := couchcorpus.ReadExchanges(authDir + "design-funcs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTServer(t, Config{Users: map[string]string{"admin": "pw"}, PasswordIterations: authIterations})
	rp := &authReplay{t: t, base: ts.url, script: script, cookies: map[string]string{},
		saved: map[string]any{}, mapper: couchcorpus.NewMapper(), client: &http.Client{}}
	rp.replay(exchanges, "couchdb35-extra/design-funcs")
}
