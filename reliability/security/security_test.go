// Package security checks Settee's defaults that keep data from the wrong
// hands: TLS verification on by default (library and CLI), credentials in
// no log, error, event, status or replication log, escaping of ids and
// attachment names in URLs, and a server that refuses anonymous requests
// when users are configured, non-loopback addresses without users, and
// bodies over its size limit.
package security

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/server"
	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println("reliability/security:", rtest.Count.Report())
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

var buildOnce = gosync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "settee-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "settee")
	wd, _ := os.Getwd()
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/settee")
	cmd.Dir = filepath.Join(wd, "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build settee: %v\n%s", err, out)
	}
	return bin, nil
})

func settee(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {}) // the binary's directory is removed by the OS temp cleaner
	return bin
}

func runCLI(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx(t), settee(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// tlsFront serves our server over HTTPS with httptest's self-signed
// certificate and writes that certificate to a PEM file.
func tlsFront(t *testing.T, upstream string) (string, string) {
	t.Helper()
	u, _ := url.Parse(upstream)
	srv := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(u))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL, ca
}

func TestTLSVerifiedByDefault(t *testing.T) {
	rtest.Count.Scenarios.Add(1)
	hub := servertest.Start(t, nil)
	dbURL := hub.CreateDB(t, "tls")
	testutil.DoJSON(ctx(t), t, http.MethodPut, dbURL+"/doc1", map[string]any{"v": 1}, nil)
	front, ca := tlsFront(t, hub.URL)

	t.Run("library", func(t *testing.T) {
		db, err := couch.New(front+"/tls", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.Info(ctx(t))
		var ue *couch.UnreachableError
		if !errors.As(err, &ue) || !ue.BadCertificate {
			t.Fatalf("self-signed certificate without its CA: got %v, want a bad-certificate error", err)
		}
		if couch.IsRetryable(err) {
			t.Errorf("an untrusted certificate is retried: %v", err)
		}
		db, err = couch.New(front+"/tls", &couch.Options{CAFile: ca})
		if err != nil {
			t.Fatal(err)
		}
		local := localdbtest.OpenNamed(t, "local", nil)
		if _, err := sync.Replicate(ctx(t), sync.Options{Source: db, Target: localpeer.New(local)}); err != nil {
			t.Fatalf("pull over TLS with the CA file: %v", err)
		}
		if _, err := local.Get(ctx(t), "doc1", localdb.GetOptions{}); err != nil {
			t.Fatalf("doc1 not pulled: %v", err)
		}
	})
	t.Run("cli", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "l.sqlite")
		out, err := runCLI(t, nil, "pull", "--retries", "0", path, front+"/tls")
		if err == nil {
			t.Fatalf("settee pull trusted a self-signed certificate:\n%s", out)
		}
		out, err = runCLI(t, nil, "pull", "--ca-file", ca, path, front+"/tls")
		if err != nil {
			t.Fatalf("settee pull --ca-file: %v\n%s", err, out)
		}
	})
}

// TestCredentialsNeverLeak runs replications with credentials in the URL,
// successful and failing ones (wrong password, missing database, server
// gone), and looks for the password (and its Basic encoding) in every event,
// status, result, error, request event, server log line, replication log
// document and CLI output.
func TestCredentialsNeverLeak(t *testing.T) {
	rtest.Count.Scenarios.Add(1)
	const user, pass, wrong = "alice", "Pw-s3cr3t-4711", "Wr0ng-s3cr3t-0815"
	var logBuf bytes.Buffer
	var logMu gosync.Mutex
	hub := servertest.Start(t, &server.Config{Users: map[string]string{user: pass},
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	hub.CreateDB(t, "creds", user, pass)
	base, _ := url.Parse(hub.URL)
	withCreds := func(p, db string) string {
		u := *base
		u.User = url.UserPassword(user, p)
		u.Path = "/" + db
		return u.String()
	}

	var seen bytes.Buffer
	var seenMu gosync.Mutex
	record := func(v any) {
		seenMu.Lock()
		defer seenMu.Unlock()
		b, err := json.Marshal(v)
		if err != nil {
			fmt.Fprintf(&seen, "%+v\n", v)
		} else {
			seen.Write(b)
			seen.WriteByte('\n')
		}
		fmt.Fprintf(&seen, "%+v %v\n", v, v)
	}
	local := localdbtest.OpenNamed(t, "local", nil)
	rtest.WriteLocal(ctx(t), t, local, rtest.Gen(rand.New(rand.NewSource(1)), "d", 20, false, false))
	run := func(rawURL string) {
		remote, err := couch.New(rawURL, &couch.Options{Retries: 1, BackoffBase: time.Millisecond, Timeout: 2 * time.Second,
			Observer: func(e couch.RequestEvent) { record(e); record(fmt.Sprint(e.Err)) }})
		if err != nil {
			record(err.Error())
			return
		}
		record(remote.String())
		opts := sync.Options{Retries: 1, RetryDelay: time.Millisecond,
			OnEvent: func(e sync.Event) { record(e); record(fmt.Sprint(e.Err)) }}
		rep, err := sync.NewSync(localpeer.New(local), remote, opts)
		if err != nil {
			record(err.Error())
			return
		}
		if err := rep.Start(ctx(t)); err != nil {
			record(err.Error())
		}
		err = rep.Wait()
		record(fmt.Sprint(err))
		if err != nil {
			record(fmt.Sprintf("%+v %#v", err, err.Error()))
		}
		record(rep.Status())
		for _, r := range rep.Results() {
			record(r)
		}
	}
	run(withCreds(pass, "creds"))    // works
	run(withCreds(wrong, "creds"))   // 401
	run(withCreds(pass, "nosuchdb")) // 404
	run("http://" + user + ":" + pass + "@127.0.0.1:1/creds")

	// The replication logs on both sides.
	remote, _ := couch.New(withCreds(pass, "creds"), nil)
	for _, p := range []sync.Peer{localpeer.New(local), remote} {
		for _, dir := range []sync.Options{{Source: localpeer.New(local), Target: remote}, {Source: remote, Target: localpeer.New(local)}} {
			id := sync.ReplicationID(dir)
			raw, err := p.GetLocal(ctx(t), id)
			if err == nil {
				record(string(raw))
			}
		}
	}

	// The CLI, with credentials in the URL and in the environment.
	path := filepath.Join(t.TempDir(), "cli.sqlite")
	for _, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"sync", "--json", path, withCreds(pass, "creds")}},
		{nil, []string{"pull", "--retries", "0", path, withCreds(wrong, "creds")}},
		{nil, []string{"pull", "--retries", "0", "--json", path, withCreds(wrong, "creds")}},
		{[]string{"SETTEE_USER=" + user, "SETTEE_PASSWORD=" + wrong}, []string{"pull", "--retries", "0", path, hub.URL + "/creds"}},
		{nil, []string{"pull", "--retries", "0", path, withCreds(pass, "nosuchdb")}},
	} {
		out, err := runCLI(t, c.env, c.args...)
		record(out)
		record(fmt.Sprint(err))
	}

	logMu.Lock()
	logs := logBuf.String()
	logMu.Unlock()
	seenMu.Lock()
	all := seen.String() + logs
	seenMu.Unlock()
	if !strings.Contains(all, "unauthorized") && !strings.Contains(all, "401") {
		t.Fatalf("the wrong password never failed?\n%.2000s", all)
	}
	for _, secret := range []string{pass, wrong,
		base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)),
		base64.StdEncoding.EncodeToString([]byte(user + ":" + wrong)),
		url.QueryEscape(pass), "Authorization", "AuthSession="} {
		if i := strings.Index(all, secret); i >= 0 {
			rtest.Count.Lost.Add(1)
			t.Errorf("%q leaked: ...%s...", secret, all[max(0, i-300):min(len(all), i+100)])
		}
	}
	t.Logf("checked %d KiB of events, errors, statuses, logs and CLI output", len(all)>>10)
}

type lockedWriter struct {
	w  io.Writer
	mu *gosync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestServerRefusals: with users configured nothing is served anonymously
// or with a wrong password; without users the server refuses to listen
// beyond loopback; bodies over MaxBodySize are refused with 413 and change
// nothing.
func TestServerRefusals(t *testing.T) {
	rtest.Count.Scenarios.Add(1)
	t.Run("auth", func(t *testing.T) {
		// The lockout is off: this walk sends bob's wrong password more
		// often than it allows (TestHubAttacks covers it).
		hub := servertest.Start(t, &server.Config{Users: map[string]string{"bob": "pw-bob-1"}, LockoutThreshold: -1})
		dbURL := hub.CreateDB(t, "priv", "bob", "pw-bob-1")
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/priv", ""}, {"GET", "/_all_dbs", ""}, {"PUT", "/other", ""}, {"DELETE", "/priv", ""},
			{"GET", "/priv/_changes", ""}, {"GET", "/priv/_changes?feed=continuous&timeout=10", ""},
			{"POST", "/priv/_bulk_docs", `{"docs":[{"_id":"x"}]}`}, {"PUT", "/priv/x", `{}`},
			{"POST", "/priv/_revs_diff", `{"x":["1-a"]}`}, {"POST", "/priv/_bulk_get", `{"docs":[{"id":"x"}]}`},
			{"GET", "/priv/_local/x", ""}, {"PUT", "/priv/_local/x", `{}`}, {"GET", "/priv/_all_docs", ""},
			{"GET", "/priv/x/att.txt", ""}, {"PUT", "/priv/x/att.txt", "data"},
		} {
			for _, auth := range []string{"", "bob:wrong", "eve:pw-bob-1"} {
				req, _ := http.NewRequestWithContext(ctx(t), c.method, hub.URL+c.path, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				if u, p, ok := strings.Cut(auth, ":"); ok {
					req.SetBasicAuth(u, p)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
					t.Errorf("%s %s as %q: status %d, want 401/403", c.method, c.path, auth, resp.StatusCode)
				}
			}
		}
		var info struct {
			DocCount int64 `json:"doc_count"`
		}
		req, _ := http.NewRequest("GET", dbURL, nil)
		req.SetBasicAuth("bob", "pw-bob-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("bob cannot read his database: %v %v", resp, err)
		}
		json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		if info.DocCount != 0 {
			t.Errorf("anonymous writes got in: doc_count %d", info.DocCount)
		}
	})
	t.Run("non-loopback", func(t *testing.T) {
		for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
			s, err := server.New(server.Config{Addr: addr, DataDir: t.TempDir()})
			if err == nil {
				var l interface{ Close() error }
				l, err = s.Listen()
				if l != nil {
					l.Close()
				}
				s.Close()
			}
			if !errors.Is(err, server.ErrInsecure) {
				t.Errorf("listen on %q without users: %v, want ErrInsecure", addr, err)
			}
		}
	})
	t.Run("body-limits", func(t *testing.T) {
		hub := servertest.Start(t, &server.Config{MaxBodySize: 4096})
		dbURL := hub.CreateDB(t, "small")
		big := strings.Repeat("x", 10000)
		for _, c := range []struct {
			method, path, ct string
			body             string
			chunked          bool
		}{
			{"PUT", "/small/doc", "application/json", `{"v":"` + big + `"}`, false},
			{"PUT", "/small/doc", "application/json", `{"v":"` + big + `"}`, true},
			{"POST", "/small/_bulk_docs", "application/json", `{"docs":[{"_id":"a","v":"` + big + `"}]}`, false},
			{"POST", "/small/_bulk_docs", "application/json", `{"docs":[{"_id":"a","v":"` + big + `"}]}`, true},
			{"PUT", "/small/doc2/att.bin", "application/octet-stream", big, true},
			{"PUT", "/small/_local/cp", "application/json", `{"v":"` + big + `"}`, false},
			{"POST", "/small/_revs_diff", "application/json", `{"a":["` + big + `"]}`, true},
			{"PUT", "/small/doc3", `multipart/related; boundary="b"`, "--b\r\nContent-Type: application/json\r\n\r\n{\"_attachments\":{\"f\":{\"follows\":true,\"length\":10000,\"content_type\":\"text/plain\"}}}\r\n--b\r\n\r\n" + big + "\r\n--b--", true},
		} {
			var body io.Reader = strings.NewReader(c.body)
			if c.chunked {
				body = io.MultiReader(body) // unknown length: chunked
			}
			req, _ := http.NewRequestWithContext(ctx(t), c.method, hub.URL+c.path, body)
			req.Header.Set("Content-Type", c.ct)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Errorf("%s %s (%d bytes, chunked %v): status %d, want 413", c.method, c.path, len(c.body), c.chunked, resp.StatusCode)
			}
		}
		var info struct {
			DocCount  int64           `json:"doc_count"`
			UpdateSeq json.RawMessage `json:"update_seq"`
		}
		testutil.DoJSON(ctx(t), t, "GET", dbURL, nil, &info)
		if info.DocCount != 0 || string(info.UpdateSeq) != "0" {
			t.Errorf("refused bodies changed the database: %+v", info)
		}
	})
}

// TestEscapingInURLs pushes documents with tricky ids and attachment names
// to our server and pouchdb-server, then reads each back with a URL built
// here: everything arrives under its exact name.
func TestEscapingInURLs(t *testing.T) {
	rtest.Count.Scenarios.Add(1)
	ids := append([]string{"_design/a b/c"}, rtest.TrickyIDs...)
	names := []string{"../up.txt", "a/b.txt", "%2F.txt", "q?x=1#f.txt", "sp ace+plus.txt", "ü✓.txt"}
	local := localdbtest.OpenNamed(t, "local", nil)
	for i, id := range ids {
		doc := &couchdoc.Doc{ID: id, Body: json.RawMessage(`{"v":1}`), Attachments: map[string]*couchdoc.Attachment{}}
		name := names[i%len(names)]
		doc.Attachments[name] = &couchdoc.Attachment{ContentType: "text/plain", Data: []byte("bytes of " + id)}
		if _, err := local.Put(ctx(t), doc); err != nil {
			t.Fatalf("put %q: %v", id, err)
		}
	}
	hub := servertest.Start(t, nil)
	pouch := testpeer.PouchDB(t)
	for name, dbURL := range map[string]string{"settee": hub.CreateDB(t, "esc"), "pouchdb": pouch.CreateDB(t, "esc")} {
		t.Run(name, func(t *testing.T) {
			remote, err := couch.New(dbURL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sync.Replicate(ctx(t), sync.Options{Source: localpeer.New(local), Target: remote}); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				name := names[i%len(names)]
				u := dbURL + "/" + rtest.EscapeID(id) + "/" + wire.EscapeAttachment(name)
				req, _ := http.NewRequestWithContext(ctx(t), "GET", u, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != "bytes of "+id {
					t.Errorf("%q/%q: status %d, %q", id, name, resp.StatusCode, b)
				}
			}
			// Database names with path tricks never escape the data dir.
			if name == "settee" {
				for _, bad := range []string{"..%2Fevil", "a%2F..%2F..%2Fevil", "%2E%2E"} {
					req, _ := http.NewRequestWithContext(ctx(t), "PUT", hub.URL+"/"+bad, nil)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if resp.StatusCode != 400 {
						t.Errorf("PUT /%s: status %d, want 400", bad, resp.StatusCode)
					}
				}
				entries, _ := os.ReadDir(filepath.Dir(hub.Dir))
				for _, e := range entries {
					if strings.Contains(e.Name(), "evil") {
						t.Errorf("a database escaped the data dir: %s", e.Name())
					}
				}
			}
		})
	}
}
