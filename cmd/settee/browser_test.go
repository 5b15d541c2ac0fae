package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

// chromiumPath is Debian's Chromium. In CI (CI set) a missing one fails
// the test; elsewhere the test is skipped with a message.
func chromiumPath(t *testing.T) string {
	t.Helper()
	const p = "/usr/bin/chromium"
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Chromium is missing (%v): CI installs Debian's chromium package (.ci/run)", err)
		}
		t.Skipf("no Chromium at %s (apt-get install chromium); skipped because CI is not set", p)
	}
	return p
}

// browserRun is what testdata/browser/pouchdb-browser.js reports for one
// page.
type browserRun struct {
	Label    string
	PushPull struct {
		Pushed, Pulled, Count, Attachments int
		PushOK, PullOK, Same, SameAsRemote bool
		PushMs, PullMs                     int
	}
	Live struct {
		Found bool
		Ms    int
		Err   any
	}
	Conflict struct {
		BrowserRev, ServerRev string
		Browser, Server       struct {
			Rev, Side string
			Conflicts []string
		}
	}
	Resolved struct {
		Browser, Server struct {
			Rev       string
			Conflicts []string
		}
	}
	PageErrors []string
	// Login is the cookie sign-in of the run that has one: POST /_session
	// cross-origin, then every request with the cookie alone; after
	// DELETE /_session the database refuses the page.
	Login *struct {
		OK                 bool
		Name               string
		CookieOnly         bool
		RefusedAfterLogout bool
	}
}

// TestBrowserPouchDB: a PouchDB 9 page in Debian's headless Chromium uses
// `settee serve DIR` as a web app uses CouchDB: from another origin (CORS
// with credentials, the server started with --cors-origins and
// --cors-credentials), and from the same origin behind a reverse proxy
// that serves the page and passes /db/ to the server. Each pushes 100
// documents with Blob attachments into a database PouchDB creates, pulls
// them into a second browser database identically, follows the server live
// while the server takes a write, and ends a conflict edited on both
// sides with the winner the server picks.
func TestBrowserPouchDB(t *testing.T) {
	chromium := chromiumPath(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	root := testpeer.RepoRoot(t)
	pouchJS := filepath.Join(root, "node_modules", "pouchdb", "dist", "pouchdb.min.js")
	for _, p := range []string{pouchJS, filepath.Join(root, "node_modules", "playwright-core")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("npm packages are missing (run `npm ci` at the repository root): %v", err)
		}
	}

	// The page's own server, on another port: another origin.
	pages := http.NewServeMux()
	pages.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(root, "testdata", "browser", "index.html"))
	})
	pages.HandleFunc("/pouchdb.min.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, pouchJS) })
	pageURL := listen(t, pages)

	dir := t.TempDir()
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("browser-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, serverURL := serveLines(t, "--user", "admin", "--password-file", pw,
		"--cors-origins", pageURL, "--cors-credentials", dir)

	// The same page behind a reverse proxy that passes /db/ to the server.
	target, _ := url.Parse(serverURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1                    // feeds stream through
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a cancelled feed is no news
	proxied := http.NewServeMux()
	proxied.Handle("/db/", http.StripPrefix("/db", proxy))
	proxied.Handle("/", pages)
	proxyURL := listen(t, proxied)

	// A hub's user, who signs in with a session cookie and syncs a
	// database only members may use.
	sendAuth(t, "PUT", serverURL+"/_users/org.couchdb.user:nurse", `{"name":"nurse","password":"nurse-pw","roles":["ward-staff"],"type":"user"}`, "admin", "browser-secret", 201)
	sendAuth(t, "PUT", serverURL+"/ward", "", "admin", "browser-secret", 201)
	sendAuth(t, "PUT", serverURL+"/ward/_security", `{"members":{"roles":["ward-staff"]}}`, "admin", "browser-secret", 200)

	cfg, _ := json.Marshal(map[string]any{
		"chromium": chromium, "userDataDir": t.TempDir(), "server": serverURL, "user": "admin", "password": "browser-secret",
		"runs": []map[string]string{
			{"label": "cross-origin", "page": pageURL + "/", "remote": serverURL + "/webapp", "db": "webapp"},
			{"label": "reverse-proxy", "page": proxyURL + "/", "remote": proxyURL + "/db/proxied", "db": "proxied"},
			{"label": "cookie-signin", "page": pageURL + "/", "remote": serverURL + "/ward", "db": "ward", "login": "nurse:nurse-pw"},
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(root, "testdata", "browser", "pouchdb-browser.js"), string(cfg))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(root, "node_modules"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser run: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	t.Logf("browser runs took %v", time.Since(start).Round(time.Millisecond))
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<20)
	runs := 0
	for sc.Scan() {
		var r browserRun
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("driver output %q: %v", sc.Text(), err)
		}
		runs++
		checkBrowserRun(t, r)
	}
	if runs != 3 {
		t.Fatalf("%d runs reported, want 3; stderr: %s", runs, stderr.String())
	}
	if got := strings.TrimSpace(getBodyAuth(t, serverURL+"/_all_dbs", "admin", "browser-secret")); got != `["_replicator","_users","proxied","ward","webapp"]` {
		t.Errorf("_all_dbs = %s", got)
	}
}

func checkBrowserRun(t *testing.T, r browserRun) {
	t.Helper()
	if r.Login != nil && (!r.Login.OK || r.Login.Name != "nurse" || !r.Login.CookieOnly || !r.Login.RefusedAfterLogout) {
		t.Errorf("%s: cookie sign-in %+v", r.Label, *r.Login)
	}
	t.Logf("%s: push %d docs in %d ms, pull in %d ms, live write seen after %d ms", r.Label, r.PushPull.Pushed, r.PushPull.PushMs, r.PushPull.PullMs, r.Live.Ms)
	p := r.PushPull
	if !p.PushOK || !p.PullOK || p.Pushed != 100 || p.Pulled != 100 || p.Count != 100 || p.Attachments != 134 || !p.Same || !p.SameAsRemote {
		t.Errorf("%s: push/pull %+v", r.Label, p)
	}
	if !r.Live.Found {
		t.Errorf("%s: the server-side write never reached the page (%v)", r.Label, r.Live.Err)
	}
	c := r.Conflict
	if c.BrowserRev == c.ServerRev || !strings.HasPrefix(c.BrowserRev, "2-") || !strings.HasPrefix(c.ServerRev, "2-") {
		t.Errorf("%s: not a conflict: %+v", r.Label, c)
	}
	if c.Browser.Rev != c.Server.Rev || c.Browser.Side != c.Server.Side || len(c.Browser.Conflicts) != 1 || len(c.Server.Conflicts) != 1 ||
		c.Browser.Conflicts[0] != c.Server.Conflicts[0] {
		t.Errorf("%s: the two sides see the conflict differently: %+v", r.Label, c)
	}
	if want := max(c.BrowserRev, c.ServerRev); c.Server.Rev != want { // CouchDB's rule: the greater rev id of equal generation
		t.Errorf("%s: winner %s, want %s", r.Label, c.Server.Rev, want)
	}
	if e := r.Resolved; e.Browser.Rev != e.Server.Rev || len(e.Browser.Conflicts) != 0 || len(e.Server.Conflicts) != 0 {
		t.Errorf("%s: after the conflict was ended: %+v", r.Label, e)
	}
	if len(r.PageErrors) > 0 {
		t.Errorf("%s: page errors: %v", r.Label, r.PageErrors)
	}
}

// listen serves h on a free loopback port until the test ends.
func listen(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return fmt.Sprintf("http://%s", l.Addr())
}

func getBodyAuth(t *testing.T, u, user, pass string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.SetBasicAuth(user, pass)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return b.String()
}

// sendAuth sends a request as user and fails the test on another status.
func sendAuth(t *testing.T, method, u, body, user, pass string, want int) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(user, pass)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		t.Fatalf("%s %s: %d %s, want %d", method, u, res.StatusCode, b.String(), want)
	}
}
