package server

import (
	"strings"
	"testing"
)

// replSecrets are the credentials of bob's replication document in
// TestReplicatorCredentialsEveryReadPath.
var replSecrets = []string{"pw-in-url", "s3cret-auth", "c2VjcmV0LWhlYWRlcg"}

// TestReplicatorCredentialsEveryReadPath walks every path that returns a
// _replicator document's body as its owner, another member, a database
// admin and the server admin, and looks for the document's credentials
// in each answer: only the owner and the admins see them, as CouchDB's
// after_doc_read (the selector of _find cannot probe them either). The
// feeds (_all_docs, _changes) are for server admins only.
func TestReplicatorCredentialsEveryReadPath(t *testing.T) {
	ts := newReplHub(t, Config{})
	ts.createUser("bob", "bobpw", nil)
	ts.createUser("carol", "carolpw", nil)
	ts.createUser("dave", "davepw", nil)
	ts.do("GET", "/_replicator", nil) // made on first use
	ts.must(200, "PUT", "/_replicator/_security", map[string]any{
		"members": map[string]any{"names": []string{"bob", "carol", "dave"}},
		"admins":  map[string]any{"names": []string{"dave"}, "roles": []string{"_admin"}},
	})
	ts.must(201, "PUT", "/_replicator/_design/v", map[string]any{
		"views": map[string]any{"all": map[string]any{"map": "function(doc) { emit(doc._id, null); }"}},
	})
	as := func(u string) { ts.user, ts.pass = u, u+"pw" }
	as("bob")
	// Unreachable endpoints: the job crashes and retries, and never
	// writes to the document.
	rev := ts.putDoc("_replicator", "bobs", map[string]any{
		"source": "http://bob:pw-in-url@127.0.0.1:1/src",
		"target": map[string]any{"url": "http://127.0.0.1:1/tgt",
			"headers": map[string]string{"Authorization": "Basic c2VjcmV0LWhlYWRlcg=="},
			"auth":    map[string]any{"basic": map[string]any{"username": "bob", "password": "s3cret-auth"}}},
		"continuous": true,
	})
	rev = ts.must(201, "PUT", "/_replicator/bobs/note.txt?rev="+rev, "plain note", "Content-Type", "text/plain").json(t)["rev"].(string)

	mixed := []string{"Accept", "multipart/mixed"}
	type read struct {
		method, path string
		body         any
		hdr          []string
		feed         bool // server admins only
	}
	reads := []read{
		{"GET", "/_replicator/bobs", nil, nil, false},
		{"GET", "/_replicator/bobs?rev=" + rev, nil, nil, false},
		{"GET", "/_replicator/bobs?revs=true&revs_info=true&conflicts=true&deleted_conflicts=true&local_seq=true&meta=true", nil, nil, false},
		{"GET", "/_replicator/bobs?attachments=true", nil, nil, false},
		{"GET", "/_replicator/bobs?attachments=true", nil, []string{"Accept", "multipart/related"}, false},
		{"GET", "/_replicator/bobs?open_revs=all&revs=true", nil, nil, false},
		{"GET", `/_replicator/bobs?open_revs=["` + rev + `"]&latest=true`, nil, nil, false},
		{"GET", "/_replicator/bobs?open_revs=all", nil, mixed, false},
		{"POST", "/_replicator/_bulk_get?revs=true", map[string]any{"docs": []any{map[string]any{"id": "bobs"}, map[string]any{"id": "bobs", "rev": rev}}}, nil, false},
		{"POST", "/_replicator/_bulk_get?attachments=true", map[string]any{"docs": []any{map[string]any{"id": "bobs"}}}, mixed, false},
		{"POST", "/_replicator/_find", map[string]any{"selector": map[string]any{"_id": "bobs"}}, nil, false},
		{"POST", "/_replicator/_find", map[string]any{"selector": map[string]any{"_id": map[string]any{"$gt": nil}}, "fields": []string{"_id", "_rev", "source", "target"}, "conflicts": true}, nil, false},
		{"GET", "/_replicator/_design/v/_view/all?include_docs=true", nil, nil, false},
		{"POST", "/_replicator/_design/v/_view/all/queries", map[string]any{"queries": []any{map[string]any{"include_docs": true}}}, nil, false},
		{"GET", "/_replicator/_all_docs?include_docs=true", nil, nil, true},
		{"GET", "/_replicator/_all_docs?include_docs=true&attachments=true", nil, nil, true},
		{"POST", "/_replicator/_all_docs?include_docs=true", map[string]any{"keys": []string{"bobs"}}, nil, true},
		{"POST", "/_replicator/_all_docs/queries", map[string]any{"queries": []any{map[string]any{"include_docs": true}}}, nil, true},
		{"GET", "/_replicator/_changes?include_docs=true", nil, nil, true},
		{"GET", "/_replicator/_changes?include_docs=true&attachments=true&style=all_docs", nil, nil, true},
		{"GET", "/_replicator/_changes?include_docs=true&feed=longpoll&since=0", nil, nil, true},
		{"GET", "/_replicator/_changes?include_docs=true&feed=continuous&timeout=50", nil, nil, true},
		{"GET", "/_replicator/_changes?include_docs=true&feed=eventsource&timeout=50", nil, nil, true},
		{"POST", "/_replicator/_changes?include_docs=true&filter=_doc_ids", map[string]any{"doc_ids": []string{"bobs"}}, nil, true},
	}
	for _, who := range []string{"bob", "carol", "dave", "admin"} {
		as(who)
		if who == "admin" {
			ts.pass = "adminpw"
		}
		sees := who != "carol"
		for _, rd := range reads {
			r := ts.do(rd.method, rd.path, rd.body, rd.hdr...)
			switch {
			case rd.feed && who != "admin":
				if r.status != 401 {
					t.Errorf("%s: %s %s: status %d, want 401", who, rd.method, rd.path, r.status)
				}
				continue
			case r.status != 200:
				t.Errorf("%s: %s %s: status %d: %s", who, rd.method, rd.path, r.status, r.body)
				continue
			}
			if !strings.Contains(string(r.body), "bobs") {
				t.Errorf("%s: %s %s: no document in %s", who, rd.method, rd.path, r.body)
			}
			for _, secret := range replSecrets {
				if got := strings.Contains(string(r.body), secret); got != sees {
					t.Errorf("%s: %s %s: shows %q: %v, want %v: %s", who, rd.method, rd.path, secret, got, sees, r.body)
				}
			}
		}
	}

	// Another user is shown a made-up revision: an edit from it conflicts.
	as("carol")
	shown := ts.must(200, "GET", "/_replicator/bobs", nil)
	m := shown.json(t)
	if m["_rev"] == rev || !strings.HasPrefix(m["_rev"].(string), strings.SplitN(rev, "-", 2)[0]+"-") {
		t.Errorf("carol is shown _rev %v of %s", m["_rev"], rev)
	}
	if shown.header.Get("ETag") != `"`+m["_rev"].(string)+`"` {
		t.Errorf("ETag %s for _rev %v", shown.header.Get("ETag"), m["_rev"])
	}
	if src := m["source"]; src != "http://127.0.0.1:1/src" {
		t.Errorf("carol is shown source %v", src)
	}
	// A query on the credentials finds nothing for her, the document for bob.
	probe := map[string]any{"selector": map[string]any{"target.auth.basic.password": map[string]any{"$regex": "^s3"}}}
	if docs := ts.must(200, "POST", "/_replicator/_find", probe).json(t)["docs"].([]any); len(docs) != 0 {
		t.Errorf("carol's _find on the password finds %v", docs)
	}
	as("bob")
	if docs := ts.must(200, "POST", "/_replicator/_find", probe).json(t)["docs"].([]any); len(docs) != 1 {
		t.Errorf("bob's _find on his password finds %v", docs)
	}
	as("carol")
	m["target"] = "http://127.0.0.1:1/other"
	delete(m, "owner") // as CouchDB's recording: her own edit, with the revision shown
	ts.wantError(409, "conflict", "PUT", "/_replicator/bobs", m)
	// A document without credentials keeps its revision for everyone.
	as("bob")
	plain := ts.putDoc("_replicator", "plain", map[string]any{"source": "http://127.0.0.1:1/a", "target": "http://127.0.0.1:1/b", "continuous": true})
	as("carol")
	if got := ts.must(200, "GET", "/_replicator/plain", nil).json(t)["_rev"]; got != plain {
		t.Errorf("carol is shown _rev %v of a document without credentials, stored %s", got, plain)
	}
}
