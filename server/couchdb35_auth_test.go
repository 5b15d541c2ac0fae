package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/settee/settee/internal/couchcorpus"
	"github.com/settee/settee/server/access"
)

// authDir holds CouchDB 3.5.0's recorded answers on users, sessions,
// tokens and security (testdata/couchdb35-extra/README.md, "Auth").
const authDir = "../testdata/couchdb35-extra/"

// authStep is one step of auth.json, the script the answers were
// recorded with.
type authStep struct {
	Op         string            `json:"op"`
	Method     string            `json:"method"`
	Path       string            `json:"path"`
	Note       string            `json:"note"`
	As         json.RawMessage   `json:"as"`
	Body       json.RawMessage   `json:"body"`
	Form       map[string]string `json:"form"`
	Headers    map[string]string `json:"headers"`
	Cookie     json.RawMessage   `json:"cookie"`
	SaveCookie string            `json:"save_cookie"`
	JWT        *jwtSpec          `json:"jwt"`
	Save       map[string]string `json:"save"`
	Record     *bool             `json:"record"`
	Sleep      float64           `json:"sleep"`
	Wait       *struct {
		Path, Until, Value string
	} `json:"wait"`
}

type jwtSpec struct {
	Key    string         `json:"key"`
	Alg    string         `json:"alg"`
	Claims map[string]any `json:"claims"`
	Header map[string]any `json:"header"`
	Tamper bool           `json:"tamper"`
}

type authScript struct {
	Users    map[string]string `json:"users"`
	JWTKeys  map[string]string `json:"jwt_keys"`
	Requests []authStep        `json:"requests"`
}

// authReplay sends auth.json's steps to a server set up as the recording
// CouchDB was, and compares each recorded one with CouchDB's answer.
type authReplay struct {
	t       *testing.T
	base    string
	script  authScript
	cookies map[string]string
	saved   map[string]any
	mapper  *couchcorpus.Mapper
	client  *http.Client
}

// authIterations hashes the replay's passwords with fewer rounds than
// CouchDB's 600,000 (the recorded answers are rewritten to match), to
// keep the test fast.
const authIterations = 1000

func TestCouchDB35Auth(t *testing.T) {
	t.Parallel()
	script, exchanges := readAuthScript(t, "auth")
	rsaPub, err := jwt.ParseRSAPublicKeyFromPEM(readFile(t, authDir+script.JWTKeys["rsa_public"]))
	if err != nil {
		t.Fatal(err)
	}
	ecPub, err := jwt.ParseECPublicKeyFromPEM(readFile(t, authDir+"auth-keys/ec-public.pem"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTServer(t, Config{
		Users:              map[string]string{"admin": "pw"},
		SessionSecret:      []byte("settee-cookie-secret"),
		PasswordIterations: authIterations,
		PerUser:            true,
		PerUserDelete:      true,
		JWT: &access.JWTKeys{
			HMAC:           map[string][]byte{"_default": []byte(script.JWTKeys["hmac"])},
			RSA:            map[string]*rsa.PublicKey{"rk1": rsaPub},
			EC:             map[string]*ecdsa.PublicKey{"ek1": ecPub},
			RequiredClaims: []string{"exp"},
			RolesClaimPath: "_couchdb.roles",
		},
	})
	rp := newAuthReplay(t, ts.url, script)
	rp.saved["run"] = "a1b2c3"
	rp.replay(exchanges, "couchdb35-extra/auth")
}

// readAuthScript reads testdata/couchdb35-extra's script name.json and
// its recording name.jsonl.
func readAuthScript(t *testing.T, name string) (authScript, []couchcorpus.Exchange) {
	t.Helper()
	var script authScript
	if err := json.Unmarshal(readFile(t, authDir+name+".json"), &script); err != nil {
		t.Fatal(err)
	}
	exchanges, err := couchcorpus.ReadExchanges(authDir + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return script, exchanges
}

// newAuthReplay replays script against the server at base; redirects are
// answered, not followed, as the recording kept them.
func newAuthReplay(t *testing.T, base string, script authScript) *authReplay {
	return &authReplay{t: t, base: base, script: script, cookies: map[string]string{},
		saved: map[string]any{}, mapper: couchcorpus.NewMapper(),
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// replay sends the script's steps and compares each recorded one with
// its exchange, named file#seq in the lists of differences.
func (rp *authReplay) replay(exchanges []couchcorpus.Exchange, file string) {
	t := rp.t
	t.Helper()
	script := rp.script
	next := 0
	for i, st := range script.Requests {
		switch {
		case st.Op != "":
			continue // clean-ups of a reused CouchDB: this server is new
		case st.Wait != nil:
			rp.wait(st)
		}
		if st.Sleep > 0 {
			time.Sleep(time.Duration(st.Sleep * float64(time.Second)))
		}
		got := rp.send(st)
		if st.Record != nil && !*st.Record {
			continue
		}
		if next >= len(exchanges) {
			t.Fatalf("step %d (%s) has no recorded exchange", i, st.Note)
		}
		e := &exchanges[next]
		next++
		if e.Method != st.Method {
			t.Fatalf("step %d (%s) is exchange %d (%s %s): the script and the recording disagree", i, st.Note, e.Seq, e.Method, e.Path)
		}
		normalizeAuthExchange(e)
		rp.mapper.LearnFrom(e, got)
		diffs := shardingDiffsDropped(couchcorpus.Compare(e, got, rp.mapper, couchcorpus.Options{IdentityAttachments: true, OwnBadRequestReasons: true}))
		reportDiffs(t, file+"#"+strconv.Itoa(e.Seq), e, diffs, couchDBDifferences, "couchDBDifferences", "")
	}
	if next != len(exchanges) {
		t.Fatalf("%d recorded exchanges, %d replayed", len(exchanges), next)
	}
}

var iterationsField = regexp.MustCompile(`"iterations":600000`)

// shardingDiffsDropped leaves out the differences that come from how
// CouchDB keeps a database, not from what it answers: its update and
// purge sequences count per shard (the recording's databases have two,
// and its _users database had a history before), and compaction runs in
// the background. The sequences' own rules are checked by the other
// replays.
func shardingDiffsDropped(diffs []string) []string {
	out := diffs[:0]
	for _, d := range diffs {
		switch {
		case strings.HasPrefix(d, "body.update_seq:"), strings.HasPrefix(d, "body.purge_seq:"),
			strings.HasPrefix(d, "body.last_seq:"), strings.HasPrefix(d, "body.compact_running:"),
			strings.HasPrefix(d, "body.salt:"), strings.HasPrefix(d, "body.derived_key:"):
		default:
			out = append(out, d)
		}
	}
	return out
}

// normalizeAuthExchange makes what differs by setting, not behaviour,
// the same: the PBKDF2 rounds, and CouchDB's design document of _users
// validation (its _auth function, which this server runs as Go code).
func normalizeAuthExchange(e *couchcorpus.Exchange) {
	e.RespBody = iterationsField.ReplaceAllString(e.RespBody, `"iterations":`+strconv.Itoa(authIterations))
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var placeholder = regexp.MustCompile(`\{\{(\w+)\}\}`)

func (rp *authReplay) fill(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v := rp.saved[m[2:len(m)-2]]
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	})
}

// send makes the request of a step as the recorder did and returns the
// answer.
func (rp *authReplay) send(st authStep) *couchcorpus.Response {
	t := rp.t
	t.Helper()
	var body io.Reader
	var raw string
	switch {
	case st.Form != nil:
		v := url.Values{}
		for k, x := range st.Form {
			v.Set(k, x)
		}
		raw = v.Encode()
	case len(st.Body) > 0:
		var s string
		if json.Unmarshal(st.Body, &s) == nil {
			raw = s
		} else {
			raw = string(st.Body)
		}
	}
	raw = rp.fill(raw)
	if raw != "" {
		body = strings.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(context.Background(), st.Method, rp.base+rp.fill(st.Path), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if len(st.Body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	if st.Form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range st.Headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, rp.fill(v))
	}
	basic := len(st.Cookie) == 0 && st.JWT == nil
	switch as := string(st.As); {
	case as == "null":
	case as == "":
		if basic {
			req.SetBasicAuth("admin", "pw")
		}
	case strings.HasPrefix(as, "["):
		var pair []string
		_ = json.Unmarshal(st.As, &pair)
		req.SetBasicAuth(pair[0], rp.fill(pair[1]))
	default:
		var who string
		_ = json.Unmarshal(st.As, &who)
		pw := rp.script.Users[who]
		if who == "admin" {
			pw = "pw"
		}
		req.SetBasicAuth(rp.fill(who), pw)
	}
	if len(st.Cookie) > 0 {
		req.Header.Set("Cookie", "AuthSession="+rp.cookie(st.Cookie))
	}
	if st.JWT != nil {
		req.Header.Set("Authorization", "Bearer "+rp.mint(st.JWT))
	}
	resp, err := rp.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", st.Method, st.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if st.SaveCookie != "" {
		for _, c := range resp.Cookies() {
			if c.Name == access.CookieName {
				rp.cookies[st.SaveCookie] = c.Value
			}
		}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		for v, field := range st.Save {
			if x, ok := m[field]; ok {
				rp.saved[v] = x
			}
		}
	}
	return &couchcorpus.Response{Status: resp.StatusCode, Header: resp.Header, Body: b, Request: req.Method + " " + req.URL.String()}
}

// wait polls, as the admin, until a JSON list has or lacks a value.
func (rp *authReplay) wait(st authStep) {
	for range 200 {
		r := rp.send(authStep{Method: "GET", Path: st.Wait.Path})
		var list []string
		_ = json.Unmarshal(r.Body, &list)
		present := false
		for _, v := range list {
			present = present || v == st.Wait.Value
		}
		if present == (st.Wait.Until != "absent") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	rp.t.Fatalf("waited in vain for %s %s %q", st.Wait.Path, st.Wait.Until, st.Wait.Value)
}

func relTime(v any, now int64) any {
	if s, ok := v.(string); ok && len(s) > 1 && (s[0] == '+' || s[0] == '-') {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return now + n
		}
	}
	return v
}

func b64url(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// cookie is a saved session cookie, or one forged as the recorder did.
func (rp *authReplay) cookie(spec json.RawMessage) string {
	var slot string
	if json.Unmarshal(spec, &slot) == nil {
		return rp.cookies[slot]
	}
	var f struct {
		Forge struct {
			User, Secret, Time, Raw string
			SaltOf                  string `json:"salt_of"`
		}
	}
	_ = json.Unmarshal(spec, &f)
	if f.Forge.Raw != "" {
		return b64url([]byte(f.Forge.Raw))
	}
	saltOf := f.Forge.User
	if f.Forge.SaltOf != "" {
		saltOf = f.Forge.SaltOf
	}
	var doc struct {
		Salt string `json:"salt"`
	}
	r := rp.send(authStep{Method: "GET", Path: "/_users/org.couchdb.user:" + saltOf})
	_ = json.Unmarshal(r.Body, &doc)
	tm := relTime(f.Forge.Time, time.Now().Unix()).(int64)
	hexTime := strings.ToUpper(strconv.FormatInt(tm, 16))
	m := hmac.New(sha256.New, []byte(f.Forge.Secret+doc.Salt))
	m.Write([]byte(f.Forge.User + ":" + hexTime))
	return b64url(append([]byte(f.Forge.User+":"+hexTime+":"), m.Sum(nil)...))
}

// mint makes a bearer token as the recorder did.
func (rp *authReplay) mint(spec *jwtSpec) string {
	t := rp.t
	now := time.Now().Unix()
	claims := map[string]any{}
	for k, v := range spec.Claims {
		claims[k] = relTime(v, now)
	}
	alg := spec.Alg
	header := map[string]any{"alg": alg, "typ": "JWT"}
	for k, v := range spec.Header {
		header[k] = v
	}
	hb, _ := json.Marshal(header)
	cb, _ := json.Marshal(claims)
	signing := b64url(hb) + "." + b64url(cb)
	digest := map[string]func() hash.Hash{"256": sha256.New, "384": sha512.New384, "512": sha512.New}[alg[len(alg)-3:]]
	if digest == nil {
		digest = sha256.New
	}
	mac := func(key []byte) []byte {
		m := hmac.New(digest, key)
		m.Write([]byte(signing))
		return m.Sum(nil)
	}
	var sig []byte
	switch spec.Key {
	case "none":
	case "hmac":
		sig = mac([]byte(rp.script.JWTKeys["hmac"]))
	case "hmac-wrong":
		sig = mac([]byte("not-the-secret"))
	case "rsa-public-as-hmac":
		sig = mac(readFile(t, authDir+rp.script.JWTKeys["rsa_public"]))
	case "rsa":
		key, err := jwt.ParseRSAPrivateKeyFromPEM(readFile(t, authDir+rp.script.JWTKeys["rsa_private"]))
		if err != nil {
			t.Fatal(err)
		}
		if sig, err = jwt.GetSigningMethod(alg).Sign(signing, key); err != nil {
			t.Fatal(err)
		}
	case "ec":
		key, err := jwt.ParseECPrivateKeyFromPEM(readFile(t, authDir+rp.script.JWTKeys["ec_private"]))
		if err != nil {
			t.Fatal(err)
		}
		if sig, err = jwt.GetSigningMethod(alg).Sign(signing, key); err != nil {
			t.Fatal(err)
		}
	}
	token := signing + "." + b64url(sig)
	if spec.Tamper {
		tail := "AAAA"
		if strings.HasSuffix(token, "AAAA") {
			tail = "BBBB"
		}
		token = token[:len(token)-4] + tail
	}
	return token
}

// reportDiffs fails the test for an exchange that differs from CouchDB's
// answer unless listed (with its reason) in differences, named list, and
// for a listed one that no longer differs; extra follows the diffs.
func reportDiffs(t *testing.T, key string, e *couchcorpus.Exchange, diffs []string, differences map[string]string, list, extra string) {
	t.Helper()
	if reason, ok := differences[key]; ok {
		if len(diffs) == 0 {
			t.Errorf("%s (%s %s) now answers like CouchDB: remove it from %s (%q)", key, e.Method, e.Path, list, reason)
		}
		return
	}
	if len(diffs) > 0 {
		t.Errorf("%s %s %s?%s (%s):\n\t%s%s", key, e.Method, e.Path, e.Query, e.Note, strings.Join(diffs, "\n\t"), extra)
	}
}
