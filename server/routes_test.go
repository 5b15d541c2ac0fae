package server

import (
	"net/http"
	"strings"
	"testing"
)

// routeSamples is a request path for every path shape of the route
// table, on the database "vault" holding the document "doc" (with the
// attachment "att"), the design document "_design/d" and the local
// document "_local/l".
var routeSamples = map[string]string{
	shRoot:                       "/",
	"/_up":                       "/_up",
	"/_session":                  "/_session",
	"/_uuids":                    "/_uuids",
	"/_all_dbs":                  "/_all_dbs",
	"/_active_tasks":             "/_active_tasks",
	"/_dbs_info":                 "/_dbs_info",
	"/_scheduler":                "/_scheduler/jobs",
	"/_replicate":                "/_replicate",
	"/{db}/_missing_revs":        "/vault/_missing_revs",
	"/{db}/_view_cleanup":        "/vault/_view_cleanup",
	shServer:                     "/_nosuch",
	shDB:                         "/vault",
	shDoc:                        "/vault/doc",
	shAtt:                        "/vault/doc/att",
	shLocal:                      "/vault/_local/l",
	shRefused:                    "/vault/_local",
	shDesign:                     "/vault/_design/d",
	shDesignAtt:                  "/vault/_design/d/att",
	shDesignFunc:                 "/vault/_design/d/_view/v",
	shIndexByName:                "/vault/_index/_design/d/json/i",
	"/{db}/_changes":             "/vault/_changes",
	"/{db}/_revs_diff":           "/vault/_revs_diff",
	"/{db}/_bulk_docs":           "/vault/_bulk_docs",
	"/{db}/_bulk_get":            "/vault/_bulk_get",
	"/{db}/_all_docs":            "/vault/_all_docs",
	"/{db}/_design_docs":         "/vault/_design_docs",
	"/{db}/_all_docs/queries":    "/vault/_all_docs/queries",
	"/{db}/_design_docs/queries": "/vault/_design_docs/queries",
	"/{db}/_local_docs":          "/vault/_local_docs",
	"/{db}/_ensure_full_commit":  "/vault/_ensure_full_commit",
	"/{db}/_revs_limit":          "/vault/_revs_limit",
	"/{db}/_purge":               "/vault/_purge",
	"/{db}/_purged_infos":        "/vault/_purged_infos",
	"/{db}/_purged_infos_limit":  "/vault/_purged_infos_limit",
	"/{db}/_find":                "/vault/_find",
	"/{db}/_explain":             "/vault/_explain",
	"/{db}/_index":               "/vault/_index",
	"/{db}/_compact":             "/vault/_compact",
	"/{db}/_security":            "/vault/_security",
}

// TestRoutesRefuseStrangers walks the route table: every row that is not
// public refuses an anonymous request (401) and a user who is not a
// member (403; 401 where a server admin is needed, as CouchDB), and a
// db-admin row refuses a member too, before its handler runs: the
// database is left unchanged and nothing of it is in the answers.
func TestRoutesRefuseStrangers(t *testing.T) {
	ts := newHub(t, Config{})
	ts.createUser("alice", "alicepw", nil)
	ts.createUser("mallory", "mallorypw", nil)
	ts.must(201, "PUT", "/vault", nil)
	ts.must(200, "PUT", "/vault/_security", map[string]any{"members": map[string]any{"names": []string{"alice"}}})
	ts.putDoc("vault", "doc", map[string]any{"secret": "s3cr3t-marker"})
	ts.must(201, "PUT", "/vault/_design/d", map[string]any{"views": map[string]any{}})
	ts.must(201, "PUT", "/vault/_local/l", map[string]any{"secret": "s3cr3t-marker"})
	seq := ts.updateSeq("vault")

	for _, row := range routes {
		path, ok := routeSamples[row.shape]
		if !ok {
			t.Errorf("route %s has no sample request: add one to routeSamples", row.shape)
			continue
		}
		if got := shapeOfPath(t, path); got != row.shape {
			t.Errorf("sample %s has shape %s, not %s", path, got, row.shape)
		}
		if row.perm == permPublic {
			if !publicRoutes[row.shape+" "+row.method] {
				t.Errorf("route %s %q is public: CouchDB serves only the welcome, _up, _session and _uuids to anyone", row.shape, row.method)
			}
			continue
		}
		method := row.method
		if method == "" {
			method = otherMethod(row.shape)
		}
		type who struct{ user, pass string }
		cases := map[who]int{{"", ""}: 401, {"mallory", "mallorypw"}: 403}
		if row.perm == permServerAdmin {
			cases[who{"mallory", "mallorypw"}] = 401
			cases[who{"alice", "alicepw"}] = 401
		}
		if row.perm == permDBAdmin {
			cases[who{"alice", "alicepw"}] = 403
		}
		if row.perm == permDBAdminUnauthorized {
			cases[who{"alice", "alicepw"}] = 401
		}
		if row.perm == permAuthenticated {
			delete(cases, who{"mallory", "mallorypw"}) // every user may: anonymous alone is refused
		}
		for u, want := range cases {
			ts.user, ts.pass = u.user, u.pass
			r := ts.do(method, path, "{}")
			if r.status != want {
				t.Errorf("%s %s (%s, needs %s) as %q: %d, want %d: %s", method, path, row.shape, row.perm, u.user, r.status, want, r.body)
			}
			if strings.Contains(string(r.body), "s3cr3t-marker") {
				t.Errorf("%s %s as %q shows the database's data: %s", method, path, u.user, r.body)
			}
		}
	}
	ts.user, ts.pass = "admin", "adminpw"
	if got := ts.updateSeq("vault"); got != seq {
		t.Fatalf("refused requests changed the database: update_seq %v -> %v", seq, got)
	}
}

// publicRoutes are the rows anyone may reach (shape and method): those
// CouchDB serves without credentials, and answers that refuse a method.
var publicRoutes = map[string]bool{
	shRoot + " ": true, "/_up ": true, "/_session ": true, "/_uuids ": true,
	shServer + " ": true, // 400 illegal_database_name or 404
	shDB + " ":     true, // 405 for methods /{db} does not serve
}

// otherMethod is a method a row without one of its own is reached by.
func otherMethod(shape string) string {
	switch shape {
	case shDB, shDoc, shAtt, shLocal, shDesign, shDesignAtt:
		return http.MethodPut
	}
	return http.MethodPost
}

func shapeOfPath(t *testing.T, path string) string {
	t.Helper()
	rt, err := parseRoute(path)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return shapeOf(rt)
}
