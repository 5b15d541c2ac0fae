package mobile

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/settee/settee/server"
	"github.com/settee/settee/server/access"
	"github.com/settee/settee/server/servertest"
)

// hubFixture is a settee hub with the user nina, a member (by role) of
// the database clinic, which holds one document.
func hubFixture(t *testing.T, cfg server.Config) *servertest.Instance {
	t.Helper()
	cfg.Users = map[string]string{"admin": "admin-pw"}
	cfg.PasswordIterations = 10
	hub := servertest.Start(t, &cfg)
	base := strings.Replace(hub.URL, "http://", "http://admin:admin-pw@", 1)
	httpDo(t, "PUT", base+"/_users/org.couchdb.user:nina", `{"name":"nina","password":"nina-pw","roles":["nurses"],"type":"user"}`)
	httpDo(t, "PUT", base+"/clinic", "")
	httpDo(t, "PUT", base+"/clinic/_security", `{"members":{"roles":["nurses"]}}`)
	httpDo(t, "PUT", base+"/clinic/chart-1", `{"bp":"120/80"}`)
	return hub
}

// staticToken hands out one token.
type staticToken string

func (s staticToken) Token() (string, error) { return string(s), nil }

// A hub user signing in with a JWT from the app's identity provider: the
// TokenProvider's token is the only credential, and the pull completes.
func TestReplicatorJWTWithHub(t *testing.T) {
	secret := []byte("identity-provider-secret")
	hub := hubFixture(t, server.Config{JWT: &access.JWTKeys{HMAC: map[string][]byte{"_default": secret}}})
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": "nina", "exp": time.Now().Add(time.Hour).Unix(), "_couchdb.roles": []string{"nurses"},
	}).SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	d := openTest(t)
	cfg := NewReplicatorConfig(hub.URL + "/clinic")
	cfg.Direction, cfg.Tokens = "pull", staticToken(tok)
	rec := newRecorder()
	r := must(NewReplicator(d, cfg))
	r.SetListener(rec)
	must(0, r.Start())
	defer r.Stop()
	if st := rec.waitState(t, "stopped"); st.LastError != "" {
		t.Fatalf("pull with a JWT: %+v", st)
	}
	if _, err := d.Get("chart-1"); err != nil {
		t.Fatalf("chart-1 did not arrive: %v", err)
	}
}

// A hub user with a session (Session): one sign-in, then the cookie; when
// the session expires in the middle of a continuous replication, the
// replicator signs in again and goes on, as CouchDB's replicator does.
func TestReplicatorSessionRenewedWithHub(t *testing.T) {
	hub := hubFixture(t, server.Config{SessionTimeout: time.Second})
	var logins, basic atomic.Int64
	target, _ := url.Parse(hub.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/_session" {
			logins.Add(1)
		} else if _, _, ok := r.BasicAuth(); ok {
			basic.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	d := openTest(t)
	cfg := NewReplicatorConfig(front.URL + "/clinic")
	cfg.Direction, cfg.Continuous = "pull", true
	cfg.Username, cfg.Password, cfg.Session = "nina", "nina-pw", true
	rec := newRecorder()
	r := must(NewReplicator(d, cfg))
	r.SetListener(rec)
	must(0, r.Start())
	defer r.Stop()
	waitDoc := func(id string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := d.Get(id); err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never arrived; states %v", id, rec.states)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitDoc("chart-1")
	admin := strings.Replace(hub.URL, "http://", "http://admin:admin-pw@", 1)
	time.Sleep(1500 * time.Millisecond) // the session expires
	httpDo(t, "PUT", admin+"/clinic/chart-2", `{"bp":"130/85"}`)
	waitDoc("chart-2")
	if n := logins.Load(); n < 2 {
		t.Errorf("%d sign-ins: the expired session was not renewed", n)
	}
	if n := basic.Load(); n != 0 {
		t.Errorf("%d requests sent the password: a session sends the cookie alone", n)
	}
}
