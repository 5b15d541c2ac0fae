package server

import (
	"errors"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/localdb"
)

func TestRootAndServerEndpoints(t *testing.T) {
	ts := newTServer(t, Config{})
	m := ts.must(200, "GET", "/", nil).json(t)
	if m["couchdb"] != "Welcome" || m["version"] != Version || len(m["uuid"].(string)) != 32 {
		t.Fatalf("GET /: %v", m)
	}
	if m2 := ts.must(200, "GET", "/", nil).json(t); m2["uuid"] != m["uuid"] {
		t.Fatal("uuid changes between requests")
	}
	ts.must(200, "GET", "/_up", nil)
	u := ts.must(200, "GET", "/_uuids?count=3", nil).json(t)
	if ids := u["uuids"].([]any); len(ids) != 3 || ids[0] == ids[1] {
		t.Fatalf("_uuids: %v", u)
	}
	ts.wantError(400, "bad_request", "GET", "/_uuids?count=x", nil)
	ts.wantError(405, "method_not_allowed", "POST", "/", "{}")
	ts.wantError(400, "illegal_database_name", "GET", "/_nosuch", nil)
	if r := ts.must(200, "GET", "/_all_dbs", nil); strings.TrimSpace(string(r.body)) != "[]" {
		t.Fatalf("_all_dbs: %s", r.body)
	}
}

func TestDatabaseLifecycle(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.wantError(404, "not_found", "GET", "/db", nil)
	ts.must(201, "PUT", "/db", nil)
	ts.wantError(412, "file_exists", "PUT", "/db", nil)
	m := ts.must(200, "GET", "/db", nil).json(t)
	if m["db_name"] != "db" || m["doc_count"] != 0.0 || m["update_seq"] != 0.0 {
		t.Fatalf("info: %v", m)
	}
	// PouchDB asks for /{db}/ with a trailing slash.
	if m := ts.must(200, "GET", "/db/", nil).json(t); m["db_name"] != "db" {
		t.Fatalf("GET /db/: %v", m)
	}
	ts.must(200, "HEAD", "/db", nil)
	for _, bad := range []string{"Db", "1db", "d%20b", "d.b", "db%C3%BC"} {
		ts.wantError(400, "illegal_database_name", "PUT", "/"+bad, nil)
	}
	ts.must(201, "PUT", "/a%2Fb$c(d)%2Be-f_", nil)
	m = ts.must(200, "GET", "/a%2Fb$c(d)%2Be-f_", nil).json(t)
	if m["db_name"] != "a/b$c(d)+e-f_" {
		t.Fatalf("db with slash: %v", m)
	}
	var names []string
	r := ts.must(200, "GET", "/_all_dbs", nil)
	if err := jsonUnmarshal(r.body, &names); err != nil || !reflect.DeepEqual(names, []string{"a/b$c(d)+e-f_", "db"}) {
		t.Fatalf("_all_dbs: %s", r.body)
	}
	ts.wantError(400, "bad_request", "DELETE", "/db?rev=1-a", nil)
	ts.must(200, "DELETE", "/db", nil)
	ts.wantError(404, "not_found", "GET", "/db", nil)
	ts.wantError(404, "not_found", "DELETE", "/db", nil)
	ts.wantError(404, "not_found", "GET", "/db/doc", nil)
}

// A DataDir served with NoCreate (as `settee serve DIR` does, so that its
// existing stores are never made anew) still creates databases on PUT
// /{db}, and deletes them on DELETE /{db}.
func TestNoCreateDirCreatesOnPut(t *testing.T) {
	ts := newTServer(t, Config{DBOptions: &localdb.Options{NoCreate: true}})
	ts.must(201, "PUT", "/newdb", nil)
	ts.putDoc("newdb", "x", map[string]any{"a": 1})
	if m := ts.must(200, "GET", "/newdb", nil).json(t); m["doc_count"] != 1.0 {
		t.Fatalf("info: %v", m)
	}
	ts.must(200, "DELETE", "/newdb", nil)
	ts.wantError(404, "not_found", "GET", "/newdb", nil)
	ts.must(201, "PUT", "/newdb", nil)
}

func TestSingleDatabaseMode(t *testing.T) {
	dir := t.TempDir()
	ts := newTServer(t, Config{DBPath: filepath.Join(dir, "one.sqlite"), DBName: "mine"})
	ts.must(200, "GET", "/mine", nil)
	ts.wantError(412, "file_exists", "PUT", "/mine", nil)
	ts.wantError(403, "forbidden", "PUT", "/other", nil)
	ts.wantError(403, "forbidden", "DELETE", "/mine", nil)
	ts.wantError(404, "not_found", "GET", "/other", nil)
	ts.putDoc("mine", "x", map[string]any{"a": 1})
	r := ts.must(200, "GET", "/_all_dbs", nil)
	if strings.TrimSpace(string(r.body)) != `["mine"]` {
		t.Fatalf("_all_dbs: %s", r.body)
	}
	uuid := ts.must(200, "GET", "/", nil).json(t)["uuid"]
	if uuid == "" || uuid == nil {
		t.Fatal("no uuid")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{},
		{DataDir: "x", DBPath: "y"},
		{DBPath: "y", DBName: "Bad"},
		{DataDir: "x", TLSCertFile: "c"},
		{DataDir: "x", CORS: &CORS{Credentials: true}},
		{DataDir: "x", Users: map[string]string{"": "p"}},
	} {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", c, err)
		}
	}
}

func TestParseRoute(t *testing.T) {
	cases := []struct {
		path string
		want route
	}{
		{"/", route{}},
		{"/_all_dbs", route{special: "_all_dbs"}},
		{"/db", route{db: "db"}},
		{"/db/", route{db: "db", dbSlash: true}},
		{"/a%2Fb/doc", route{db: "a/b", docID: "doc"}},
		{"/db/_changes", route{db: "db", special: "_changes"}},
		{"/db/a%2Fb", route{db: "db", docID: "a/b"}},
		{"/db/a%2Fb/att/x.txt", route{db: "db", docID: "a/b", att: "att/x.txt"}},
		{"/db/a+b%3Fc%25d", route{db: "db", docID: "a b?c%d"}}, // a raw + is a space, as in CouchDB
		{"/db/a%2Bb", route{db: "db", docID: "a+b"}},
		{"/db/_design/foo", route{db: "db", docID: "_design/foo"}},
		{"/db/_design%2Ffoo", route{db: "db", docID: "_design/foo"}},
		{"/db/_design/foo/a%2Fb", route{db: "db", docID: "_design/foo", att: "a/b"}},
		{"/db/_local/x", route{db: "db", docID: "_local/x"}},
		{"/db/_local/x%2Fy", route{db: "db", docID: "_local/x/y"}},
		{"/db/_local/x/y", route{db: "db", refused: errLocalAttachment}},
		{"/db/_local/", route{db: "db", refused: errBadLocalID}},
		{"/db/_local", route{db: "db", refused: errBadLocalID}},
		{"/db/_foo", route{db: "db", docID: "_foo"}},
		{"/db/%C3%BC", route{db: "db", docID: "ü"}},
	}
	for _, c := range cases {
		got, err := parseRoute(c.path)
		if err != nil || got != c.want {
			t.Errorf("parseRoute(%q) = %+v, %v; want %+v", c.path, got, err, c.want)
		}
	}
	for _, bad := range []string{"/db/%zz", "/db/_design", "/db/_changes/x"} {
		if _, err := parseRoute(bad); err == nil {
			t.Errorf("parseRoute(%q) accepted", bad)
		}
	}
}

func FuzzParseRoute(f *testing.F) {
	for _, s := range []string{"/", "/db/doc", "/db/_design/x/y", "/a%2Fb/c%2F/d", "/db/_local/%00", "//", "/db//x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rt, err := parseRoute(p)
		if err != nil {
			return
		}
		if rt.att != "" && rt.docID == "" {
			t.Fatalf("attachment without doc: %+v", rt)
		}
		if _, err := url.PathUnescape(strings.ReplaceAll(p, "/", "")); err != nil {
			t.Fatalf("accepted bad escaping %q", p)
		}
	})
}

// GET / lists only the features this server has: a client that sees
// "partitioned" or "access-ready" would send requests it cannot serve.
func TestWelcomeFeatures(t *testing.T) {
	ts := newTServer(t, Config{})
	m := ts.must(200, "GET", "/", nil).json(t)
	got := map[string]bool{}
	for _, f := range m["features"].([]any) {
		got[f.(string)] = true
	}
	for _, absent := range []string{"access-ready", "partitioned", "pluggable-storage-engines", "reshard"} {
		if got[absent] {
			t.Errorf("GET / lists %q, which this server lacks", absent)
		}
	}
	if !got["quickjs"] {
		t.Errorf("GET / does not list quickjs: %v", m["features"])
	}
}
