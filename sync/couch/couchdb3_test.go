package couch

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

func newTestDB(t *testing.T, rawURL string, o *Options) *DB {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	if o.BackoffBase == 0 {
		o.BackoffBase, o.BackoffMax = time.Millisecond, 5*time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.Retries == 0 {
		o.Retries = 3 // these tests use the client on its own, with its retries
	}
	db, err := New(rawURL, o)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestCouchDB3InfoAndErrors(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	u, _ := url.Parse(rp.URL)
	db := newTestDB(t, "http://admin:s3cret@"+u.Host+"/source", nil)
	if strings.Contains(db.String(), "s3cret") || strings.Contains(db.String(), "admin") {
		t.Fatalf("String() leaks credentials: %s", db)
	}
	rp.on("GET /source", "info.http")
	info, err := db.Info(ctx)
	if err != nil || !strings.HasPrefix(string(info.UpdateSeq), `"34-g1AAAA`) || info.DocCount != 3 {
		t.Fatalf("info %+v %v", info, err)
	}
	if h := rp.requests()[0].Header.Get("Authorization"); !strings.HasPrefix(h, "Basic ") {
		t.Fatalf("no basic auth from the URL's userinfo: %q", h)
	}
	for _, c := range []struct {
		fixture string
		want    *couchdoc.Error
	}{{"info_401.http", couchdoc.ErrUnauthorized}, {"info_403.http", couchdoc.ErrForbidden}, {"info_404.http", couchdoc.ErrNotFound}} {
		rp.on("GET /source", c.fixture)
		before := db.Stats().Requests
		_, err := db.Info(ctx)
		var he *HTTPError
		if !errors.Is(err, c.want) || !errors.As(err, &he) || he.Peer != db.String() {
			t.Errorf("%s: %v", c.fixture, err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: error leaks the password: %v", c.fixture, err)
		}
		if IsRetryable(err) || db.Stats().Requests-before != 1 {
			t.Errorf("%s: retried (%d requests)", c.fixture, db.Stats().Requests-before)
		}
	}
	// A garbled answer is worth asking again (the replicator does), as
	// one answer: the client does not parse it again by itself.
	rp.on("GET /source", "malformed_json.http")
	before := db.Stats().Requests
	if _, err := db.Info(ctx); !errors.Is(err, wire.ErrMalformed) || !IsRetryable(err) || db.Stats().Requests-before != 1 {
		t.Errorf("malformed: %v (%d requests)", err, db.Stats().Requests-before)
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	db := newTestDB(t, rp.URL+"/source", &Options{Retries: 2})

	rp.on("GET /source", "error_500.http", "info.http")
	if _, err := db.Info(ctx); err != nil {
		t.Fatalf("500 then 200: %v", err)
	}
	if st := db.Stats(); st.Requests != 2 || st.Retries != 1 {
		t.Fatalf("stats %+v", st)
	}

	rp.on("GET /source", "error_500.http")
	_, err := db.Info(ctx)
	var he *HTTPError
	if !errors.As(err, &he) || he.Err.Status != 500 || !IsRetryable(err) {
		t.Fatalf("500 forever: %v", err)
	}
	if st := db.Stats(); st.Requests != 5 {
		t.Fatalf("500 forever: %d requests, want 2+3", st.Requests)
	}

	// 429 with Retry-After: 1
	var events []RequestEvent
	db = newTestDB(t, rp.URL+"/source", &Options{Observer: func(e RequestEvent) { events = append(events, e) }})
	rp.on("POST /source/_revs_diff", "error_429.http", "revs_diff.http")
	diff, err := db.RevsDiff(ctx, map[string][]string{"a": {"2-" + hash('c')}, "b": {"3-" + hash('9')}})
	if err != nil || len(diff) != 2 || diff["b"].PossibleAncestors[0] != "2-"+hash('c') {
		t.Fatalf("429 then 200: %+v %v", diff, err)
	}
	if len(events) != 2 || events[0].Status != 429 || events[1].Attempt != 1 {
		t.Fatalf("events %+v", events)
	}
	if gap := events[1].Duration; gap < 0 {
		t.Fatal(gap)
	}
	if ra := retryAfter("1"); ra != time.Second {
		t.Fatalf("Retry-After 1 = %v", ra)
	}
	if ra := retryAfter(time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)); ra < 59*time.Minute {
		t.Fatalf("Retry-After date = %v", ra)
	}
}

func TestUnreachableAndTimeouts(t *testing.T) {
	ctx := context.Background()
	// nothing listens there
	rp := newReplay(t)
	addr := rp.URL
	rp.Close()
	db := newTestDB(t, addr+"/db", &Options{Retries: 1})
	_, err := db.Info(ctx)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !IsRetryable(err) || db.Stats().Requests != 2 {
		t.Fatalf("refused: %v (%d requests)", err, db.Stats().Requests)
	}

	// a server that never answers
	rp = newReplay(t)
	done := make(chan struct{})
	defer close(done)
	rp.handle("GET /db", hang(done))
	db = newTestDB(t, rp.URL+"/db", &Options{Retries: -1, Timeout: 100 * time.Millisecond})
	_, err = db.Info(ctx)
	if !errors.As(err, &ue) || !ue.TimedOut || !IsRetryable(err) {
		t.Fatalf("hang: %v", err)
	}
	// a server that stops in the middle of a body
	rp.handle("GET /db/_changes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"results":[{"seq":"1-x","id":"a","changes":[{"rev":"1-a"}]},`)
		w.(http.Flusher).Flush()
		hang(done)(w, r)
	})
	var rows int
	_, err = db.Changes(ctx, sync.ChangesOptions{}, func(*couchdoc.Change) error { rows++; return nil })
	if !errors.As(err, &ue) || !ue.TimedOut || rows != 1 {
		t.Fatalf("hang mid-body: %v, %d rows", err, rows)
	}
	// the caller's context wins: no retry after its deadline
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	db = newTestDB(t, rp.URL+"/db", &Options{Timeout: time.Minute})
	rp.handle("GET /db", hang(done))
	if _, err := db.Info(cctx); !errors.Is(err, context.DeadlineExceeded) || db.Stats().Requests != 1 {
		t.Fatalf("ctx deadline: %v after %d requests", err, db.Stats().Requests)
	}
}

func TestCouchDB3Changes(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	db := newTestDB(t, rp.URL+"/source", nil)
	rp.on("GET /source/_changes", "changes_normal.http")
	var rows []*couchdoc.Change
	last, err := db.Changes(ctx, sync.ChangesOptions{Since: json.RawMessage(`"2-g1AAAAtest"`), Limit: 10}, func(c *couchdoc.Change) error { rows = append(rows, c); return nil })
	if err != nil || len(rows) != 4 || !strings.HasPrefix(string(last), `"34-g1AAAAG3eJzLYWBg`) || rows[3].ID != "café/+?#%" {
		t.Fatalf("rows %d last %s err %v", len(rows), last, err)
	}
	q := mustQuery(t, rp.requests()[0].URI)
	if q.Get("since") != "2-g1AAAAtest" || q.Get("style") != "all_docs" || q.Get("limit") != "10" || q.Get("seq_interval") != "10" {
		t.Fatalf("query %v", q)
	}

	rp.on("GET /source/_changes", "changes_continuous.http")
	rows = nil
	last, err = db.Changes(ctx, sync.ChangesOptions{Feed: "continuous", Timeout: time.Minute, Heartbeat: 5 * time.Second}, func(c *couchdoc.Change) error { rows = append(rows, c); return nil })
	if err != nil || len(rows) != 4 || !strings.HasPrefix(string(last), `"34-`) {
		t.Fatalf("continuous: rows %d last %s err %v", len(rows), last, err)
	}
	q = mustQuery(t, rp.requests()[1].URI)
	if q.Get("feed") != "continuous" || q.Get("heartbeat") != "5000" || q.Get("timeout") != "60000" || q.Has("since") || q.Has("seq_interval") {
		t.Fatalf("continuous query %v", q)
	}
	if rp.requests()[1].Header.Get("Accept-Encoding") != "identity" {
		t.Errorf("streamed feed asks for gzip")
	}

	// a continuous feed without timeout reconnects from the last seq after
	// the server ends it, until ctx is done
	rp.on("GET /source/_changes", "changes_continuous.http")
	cctx, cancel := context.WithCancel(ctx)
	n := 0
	last, err = db.Changes(cctx, sync.ChangesOptions{Feed: "continuous"}, func(c *couchdoc.Change) error {
		if n++; n == 6 {
			cancel()
		}
		return nil
	})
	cancel()
	reqs := rp.requests()
	if !errors.Is(err, context.Canceled) || len(reqs) < 4 || !strings.HasPrefix(mustQuery(t, reqs[3].URI).Get("since"), "34-g1AAAA") {
		t.Fatalf("follow: %v, %d requests, last %s", err, len(reqs), last)
	}

	rp.on("GET /source/_changes", "changes_truncated.http")
	_, err = db.Changes(ctx, sync.ChangesOptions{}, func(*couchdoc.Change) error { return nil })
	var ue *UnreachableError
	if !errors.As(err, &ue) || !errors.Is(err, io.ErrUnexpectedEOF) || !IsRetryable(err) {
		t.Fatalf("truncated: %v", err)
	}
	rp.on("GET /source/_changes", "changes_garbled.http")
	_, err = db.Changes(ctx, sync.ChangesOptions{}, func(*couchdoc.Change) error { return nil })
	if !errors.Is(err, wire.ErrMalformed) || !IsRetryable(err) {
		t.Fatalf("garbled: %v", err)
	}
}

func mustQuery(t *testing.T, uri string) url.Values {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestChangesRequests(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	db := newTestDB(t, rp.URL+"/db", nil)
	rp.on("POST /db/_changes", "changes_empty.http")
	rp.on("GET /db/_changes", "changes_empty.http")
	nop := func(*couchdoc.Change) error { return nil }
	if _, err := db.Changes(ctx, sync.ChangesOptions{DocIDs: []string{"a", "b/c"}}, nop); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Changes(ctx, sync.ChangesOptions{Selector: json.RawMessage(`{"type":"t"}`), Since: json.RawMessage(`42`)}, nop); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Changes(ctx, sync.ChangesOptions{Filter: "app/byType", QueryParams: map[string]string{"type": "t"}}, nop); err != nil {
		t.Fatal(err)
	}
	r := rp.requests()
	if r[0].Method != "POST" || mustQuery(t, r[0].URI).Get("filter") != "_doc_ids" || string(r[0].Body) != `{"doc_ids":["a","b/c"]}` {
		t.Errorf("doc_ids: %+v %s", r[0].URI, r[0].Body)
	}
	if q := mustQuery(t, r[1].URI); r[1].Method != "POST" || q.Get("filter") != "_selector" || q.Get("since") != "42" || string(r[1].Body) != `{"selector":{"type":"t"}}` {
		t.Errorf("selector: %+v %s", r[1].URI, r[1].Body)
	}
	if q := mustQuery(t, r[2].URI); r[2].Method != "GET" || q.Get("filter") != "app/byType" || q.Get("type") != "t" {
		t.Errorf("filter: %+v", r[2].URI)
	}
	if _, err := db.Changes(ctx, sync.ChangesOptions{Feed: "sideways"}, nop); !errors.Is(err, couchdoc.ErrBadRequest) {
		t.Errorf("bad feed: %v", err)
	}
}

func TestEscaping(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	db := newTestDB(t, rp.URL+"/my%2Fdb", nil)
	cases := map[string]string{
		"a/b":         "/my%2Fdb/a%2Fb",
		"a+b":         "/my%2Fdb/a%2Bb",
		"100%":        "/my%2Fdb/100%25",
		"what?":       "/my%2Fdb/what%3F",
		"#x":          "/my%2Fdb/%23x",
		"café":        "/my%2Fdb/caf%C3%A9",
		"sp ace":      "/my%2Fdb/sp%20ace",
		"_design/x/y": "/my%2Fdb/_design/x%2Fy",
	}
	for id, want := range cases {
		rp.handle("GET "+want, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `[{"missing":"1-a"}]`)
		})
		err := db.OpenRevs(ctx, id, []string{"1-a"}, nil, func(*couchdoc.Doc, error) error { return nil })
		reqs := rp.requests()
		if err != nil || reqs[len(reqs)-1].Path != want {
			t.Errorf("%q: requested %s, want %s (%v)", id, reqs[len(reqs)-1].Path, want, err)
		}
	}
	rp.on("GET /my%2Fdb/_local/r%2F1%3F", "local_404.http")
	if _, err := db.GetLocal(ctx, "r/1?"); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Errorf("GetLocal: %v", err)
	}
	if got := wire.EscapeAttachment("dir/ü x.txt"); got != "dir/%C3%BC%20x.txt" {
		t.Errorf("attachment name: %s", got)
	}
}

func collectAll(out *[]fetched) func(*couchdoc.Doc, error) error { return collectDocs(out) }

func TestCouchDB3Fetch(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	db := newTestDB(t, rp.URL+"/source", nil)
	rp.on("GET /source/SpaghettiWithMeatballs", "open_revs_mixed.http")
	var got []fetched
	revs := []string{"1-917fa2381192822767f010b95b45325b", "7-474f12eb068c717243487a9505f6123b", "3-6bcedf1f6b2e1dc3b4d6a3ec1d4a4b7e"}
	if err := db.OpenRevs(ctx, "SpaghettiWithMeatballs", revs, []string{"5-00ecbbc54e2a171156ec345b77dfdf59"}, collectAll(&got)); err != nil {
		t.Fatal(err)
	}
	req := rp.requests()[0]
	q := mustQuery(t, req.URI)
	if q.Get("open_revs") != `["`+strings.Join(revs, `","`)+`"]` || q.Get("revs") != "true" || q.Get("latest") != "true" ||
		q.Get("atts_since") != `["5-00ecbbc54e2a171156ec345b77dfdf59"]` || !strings.Contains(req.Header.Get("Accept"), "multipart/mixed") {
		t.Fatalf("request %s %v", req.URI, req.Header)
	}
	if len(got) != 3 || got[0].doc == nil || len(got[1].atts["recipe.txt"]) != 87 || !errors.Is(got[2].err, couchdoc.ErrNotFound) {
		t.Fatalf("got %+v", got)
	}

	rp.on("GET /source/two%2Fatts", "open_revs_bad_digest.http")
	err := db.OpenRevs(ctx, "two/atts", []string{"2-" + hash('b')}, nil, collectAll(&got))
	if !errors.Is(err, couchdoc.ErrDigestMismatch) || IsRetryable(err) {
		t.Fatalf("bad digest: %v", err)
	}

	reqs := []sync.BulkGetRequest{{ID: "a", Rev: "2-" + hash('c'), AttsSince: []string{"1-" + hash('d')}}, {ID: "gone", Rev: "1-" + hash('e')}}
	for _, fx := range []string{"bulk_get_json.http", "bulk_get_mixed.http"} {
		rp.on("POST /source/_bulk_get", fx)
		got = nil
		if err := db.BulkGet(ctx, reqs, collectAll(&got)); err != nil {
			t.Fatalf("%s: %v", fx, err)
		}
		var docs, errs int
		for _, g := range got {
			if g.doc != nil {
				docs++
			} else if g.err != nil {
				errs++
			}
		}
		if fx == "bulk_get_json.http" && (docs != 2 || errs != 2 || string(got[0].atts["t.txt"]) != "tiny attachment") ||
			fx == "bulk_get_mixed.http" && (docs != 3 || errs != 1 || len(got[0].atts["x.txt"]) != 78) {
			t.Fatalf("%s: %d docs, %d errors: %+v", fx, docs, errs, got)
		}
	}
	last := rp.requests()[len(rp.requests())-1]
	if q := mustQuery(t, last.URI); q.Get("revs") != "true" || q.Get("latest") != "true" || q.Get("attachments") != "true" ||
		!strings.Contains(string(last.Body), `"atts_since":["1-dddddddddddddddddddddddddddddddd"]`) ||
		last.Header.Get("Accept") != "multipart/mixed" {
		t.Fatalf("bulk_get request %s %s", last.URI, last.Body)
	}
	rp.on("POST /source/_bulk_get", "bulk_get_405.http")
	called := false
	err = db.BulkGet(ctx, reqs, func(*couchdoc.Doc, error) error { called = true; return nil })
	if couchdoc.StatusOf(err) != http.StatusMethodNotAllowed || called {
		t.Fatalf("405: %v (fn called %v)", err, called)
	}
}

func TestCouchDB3Writes(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	db := newTestDB(t, rp.URL+"/target", nil)
	rp.on("POST /target/_bulk_docs", "bulk_docs_errors.http")
	failed, err := db.BulkDocs(ctx, []*couchdoc.Doc{newDoc("LambStew", 1, 'a', `{"servings":6}`)})
	if err != nil || len(failed) != 1 || failed[0].ID != "LambStew" || !errors.Is(failed[0].Err(), couchdoc.ErrForbidden) {
		t.Fatalf("%+v %v", failed, err)
	}
	if b := rp.requests()[0].Body; !bytes.HasSuffix(b, []byte(`"new_edits":false}`)) || !bytes.Contains(b, []byte(`"_revisions"`)) {
		t.Fatalf("body %s", b)
	}
	rp.on("POST /target/_bulk_docs", "bulk_docs_ok.http")
	if failed, err := db.BulkDocs(ctx, []*couchdoc.Doc{newDoc("x", 1, 'a', `{}`)}); err != nil || len(failed) != 0 {
		t.Fatalf("%+v %v", failed, err)
	}
	rp.on("POST /target/_ensure_full_commit", "ensure_full_commit.http")
	if err := db.EnsureFullCommit(ctx); err != nil {
		t.Fatal(err)
	}

	// PutDoc streams multipart/related with a Content-Length
	data := bytes.Repeat([]byte{0, 1, 2, 3}, 100000)
	var gotAtt []byte
	var gotLen int64
	rp.handle("PUT /target/doc%2F1", func(w http.ResponseWriter, r *http.Request) {
		gotLen = r.ContentLength
		err := wire.ReadMultipart(r.Body, r.Header.Get("Content-Type"), func(d *couchdoc.Doc, _ error) error {
			b, err := io.ReadAll(d.Attachments["data.bin"].Body)
			gotAtt = b
			return err
		})
		if err != nil || r.URL.Query().Get("new_edits") != "false" {
			w.WriteHeader(400)
			return
		}
		w.WriteHeader(201)
		io.WriteString(w, `{"ok":true,"id":"doc/1","rev":"1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`)
	})
	doc := newDoc("doc/1", 1, 'a', `{"k":"v"}`)
	doc.Attachments = map[string]*couchdoc.Attachment{"data.bin": {Body: bytes.NewReader(data), Length: int64(len(data)), Digest: digest(data), RevPos: 1}}
	if err := db.PutDoc(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotAtt, data) || gotLen <= int64(len(data)) {
		t.Fatalf("server got %d bytes (Content-Length %d)", len(gotAtt), gotLen)
	}
	// a streamed PutDoc is sent once; its failure is retryable by the caller
	rp.on("PUT /target/doc2", "error_500.http")
	doc = newDoc("doc2", 1, 'a', `{}`)
	doc.Attachments = map[string]*couchdoc.Attachment{"d": {Body: bytes.NewReader(data), Length: int64(len(data)), Digest: digest(data)}}
	before := db.Stats().Requests
	if err := db.PutDoc(ctx, doc); !IsRetryable(err) || db.Stats().Requests-before != 1 {
		t.Fatalf("500 on a streamed PutDoc: %v after %d requests", err, db.Stats().Requests-before)
	}
	// inline Data goes as multipart from memory and is retried here
	rp.on("PUT /target/doc3", "error_500.http", "ensure_full_commit.http")
	doc = newDoc("doc3", 1, 'a', `{}`)
	doc.Attachments = map[string]*couchdoc.Attachment{"d": {Data: data, Digest: digest(data)}}
	before = db.Stats().Requests
	if err := db.PutDoc(ctx, doc); err != nil || db.Stats().Requests-before != 2 {
		t.Fatalf("500 then 201 on an inline PutDoc: %v after %d requests", err, db.Stats().Requests-before)
	}
	last := rp.requests()[len(rp.requests())-1]
	if !strings.HasPrefix(last.Header.Get("Content-Type"), "multipart/related") || !bytes.Contains(last.Body, data) {
		t.Fatalf("inline PutDoc sent %s", last.Header.Get("Content-Type"))
	}
}

func TestAuth(t *testing.T) {
	ctx := context.Background()
	rp := newReplay(t)
	logins := 0
	rp.handle("POST /_session", func(w http.ResponseWriter, r *http.Request) {
		var c struct{ Name, Password string }
		json.NewDecoder(bytes.NewReader(rp.requests()[len(rp.requests())-1].Body)).Decode(&c)
		if c.Name != "admin" || c.Password != "pw" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"unauthorized","reason":"Name or password is incorrect."}`)
			return
		}
		logins++
		http.SetCookie(w, &http.Cookie{Name: "AuthSession", Value: "tok" + string(rune('0'+logins))})
		io.WriteString(w, `{"ok":true,"name":"admin","roles":["_admin"]}`)
	})
	rp.handle("GET /db", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("AuthSession")
		if err != nil || c.Value != "tok"+string(rune('0'+logins)) || logins == 1 && r.Header.Get("X-Expire") == "" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"unauthorized","reason":"session expired"}`)
			return
		}
		io.WriteString(w, `{"db_name":"db","update_seq":"1-x","instance_start_time":"0"}`)
	})
	// the first session "expires": the client logs in again on the 401
	db := newTestDB(t, rp.URL+"/db", &Options{Username: "admin", Password: "pw", Session: true, Headers: map[string]string{"X-Expire": ""}})
	if _, err := db.Info(ctx); err != nil || logins != 2 {
		t.Fatalf("session: %v after %d logins", err, logins)
	}
	bad := newTestDB(t, rp.URL+"/db", &Options{Username: "admin", Password: "wrong", Session: true})
	_, err := bad.Info(ctx)
	if !errors.Is(err, couchdoc.ErrUnauthorized) || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v", err)
	}

	// bearer token from a provider, asked again after a 401
	tokens := 0
	rp.handle("GET /bearer", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t2" {
			w.WriteHeader(401)
			io.WriteString(w, `{"error":"unauthorized","reason":"bad token"}`)
			return
		}
		io.WriteString(w, `{"db_name":"bearer","update_seq":0}`)
	})
	db = newTestDB(t, rp.URL+"/bearer", &Options{TokenFunc: func(context.Context) (string, error) {
		tokens++
		return "t" + string(rune('0'+tokens)), nil
	}, UserAgent: "settee-test/1"})
	if _, err := db.Info(ctx); err != nil || tokens != 2 {
		t.Fatalf("bearer: %v after %d tokens", err, tokens)
	}
	if ua := rp.requests()[len(rp.requests())-1].Header.Get("User-Agent"); ua != "settee-test/1" {
		t.Fatalf("user agent %q", ua)
	}
}

func TestNewDoesNoIO(t *testing.T) {
	for _, bad := range []string{"ftp://h/db", "http://h", "http://h/", "://x", "http://user:pa ss@h/db"} {
		if _, err := New(bad, nil); err == nil {
			t.Errorf("%q: no error", bad)
		} else if strings.Contains(err.Error(), "pa ss") {
			t.Errorf("%q: error leaks the password: %v", bad, err)
		}
	}
	db, err := New("http://u:p@127.0.0.1:1/db/", nil)
	if err != nil || db.String() != "http://127.0.0.1:1/db" || db.Stats().Requests != 0 {
		t.Fatalf("%v %v", db, err)
	}
	if _, err := New("https://h/db", &Options{CAFile: "/nonexistent.pem"}); err == nil {
		t.Fatal("missing CA file accepted")
	}
}

func TestTLS(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"db_name":"db","update_seq":"1-x"}`)
	}))
	defer srv.Close()
	db := newTestDB(t, srv.URL+"/db", nil)
	_, err := db.Info(ctx)
	var ue *UnreachableError
	if !errors.As(err, &ue) || !ue.BadCertificate || IsRetryable(err) || db.Stats().Requests != 1 {
		t.Fatalf("untrusted certificate: %v", err)
	}
	pemFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(pemFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{{CAFile: pemFile}, {InsecureSkipVerify: true}} {
		db := newTestDB(t, srv.URL+"/db", o)
		if _, err := db.Info(ctx); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
	}
}

func TestKeepAlive(t *testing.T) {
	ctx := context.Background()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/db/_changes":
			io.WriteString(w, `{"results":[{"seq":"1-a","id":"a","changes":[{"rev":"1-a"}]}],"last_seq":"1-a"}`+"\n")
		case "/db/_bulk_get":
			io.WriteString(w, `{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-a"}}]}]}`+"\n")
		default:
			io.WriteString(w, `{"db_name":"db","update_seq":"1-a"}`+"\n")
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	db := newTestDB(t, srv.URL+"/db", nil)
	for i := 0; i < 5; i++ {
		if _, err := db.Changes(ctx, sync.ChangesOptions{}, func(*couchdoc.Change) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := db.BulkGet(ctx, []sync.BulkGetRequest{{ID: "a", Rev: "1-a"}}, func(*couchdoc.Doc, error) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Info(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("15 sequential requests used %d connections", n)
	}
}

func TestTruncatedMultipart(t *testing.T) {
	ctx := context.Background()
	resp := readFixture(t, "open_revs_two_atts.http")
	body, _ := io.ReadAll(resp.Body)
	for _, cut := range []int{100, len(body) / 2, len(body) - 10} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body[:cut])
		}))
		db := newTestDB(t, srv.URL+"/db", nil)
		var got []fetched
		err := db.OpenRevs(ctx, "two/atts", []string{"2-" + hash('b')}, nil, collectDocs(&got))
		var ue *UnreachableError
		if !errors.As(err, &ue) || !errors.Is(err, io.ErrUnexpectedEOF) || !IsRetryable(err) {
			t.Errorf("cut at %d: %v", cut, err)
		}
		srv.Close()
	}
}
