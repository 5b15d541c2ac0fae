package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCouchDBReplicatorRevIDs has a real CouchDB's replicator copy
// documents whose rev ids are not 32 hex digits (1-x, 1-, 2-import42,
// upper-case and 64-digit hex, a 16-byte id, generation 0, conflicts
// among ids of mixed shapes) into Settee's server and back into a new
// CouchDB database: every document's leaves come back identical (opt-in,
// SETTEE_COUCHDB_URL). Before rev ids were opaque, CouchDB's replicator
// stopped at settee's _revs_diff with revs_diff_failed, 400.
func TestCouchDBReplicatorRevIDs(t *testing.T) {
	couch := liveCouch(t)
	ts := newTServer(t, Config{})
	suffix := fmt.Sprint(time.Now().UnixNano())
	src, back := "settee_revids_src_"+suffix, "settee_revids_back_"+suffix
	t.Cleanup(func() {
		for _, db := range []string{src, back} {
			req, _ := http.NewRequest(http.MethodDelete, couch.String()+"/"+db, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	})
	couchCall(t, couch, http.MethodPut, "/"+src, nil, nil, http.StatusCreated)
	hex := "0123456789abcdef0123456789abcdef"
	leaf := func(id, rev string, ids ...string) map[string]any {
		d := map[string]any{"_id": id, "_rev": rev, "v": rev}
		if len(ids) > 0 {
			var start int
			fmt.Sscanf(rev, "%d-", &start)
			d["_revisions"] = map[string]any{"start": start, "ids": ids}
		}
		return d
	}
	docs := []any{
		leaf("foo", "1-x"), leaf("empty", "1-"),
		leaf("imp", "2-import42", "import42", "import41"),
		leaf("up", "1-"+strings.ToUpper(hex)), leaf("sixteen", "1-0123456789abcdef"),
		leaf("hex64", "3-"+hex+strings.ToUpper(hex), hex+strings.ToUpper(hex), "import", "0123456789abcdef"),
		leaf("gen0", "0-x"),
		leaf("w1", "2-e0000000000000000000000000000000", "e0000000000000000000000000000000", "root"), leaf("w1", "2-f0", "f0", "root"),
		leaf("w2", "2-"+hex, hex, "root"), leaf("w2", "2-x", "x", "root"),
		leaf("w4", "2-import42", "import42", "root"), leaf("w4", "2-import5", "import5", "root"), leaf("w4", "2-", "", "root"),
		leaf("dash", "2-a-b c", "a-b c", "r-1"),
	}
	couchCall(t, couch, http.MethodPost, "/"+src+"/_bulk_docs", map[string]any{"new_edits": false, "docs": docs}, nil, http.StatusCreated)
	for _, rep := range []map[string]any{
		{"source": couch.String() + "/" + src, "target": ts.url + "/dev", "create_target": true},
		{"source": ts.url + "/dev", "target": couch.String() + "/" + back, "create_target": true},
	} {
		var res map[string]any
		couchCall(t, couch, http.MethodPost, "/_replicate", rep, &res, http.StatusOK)
		if res["ok"] != true {
			t.Fatalf("_replicate %v: %v", rep["source"], res)
		}
	}
	couchAuth := func(r *http.Request) {
		if p, ok := couch.User.Password(); ok {
			r.SetBasicAuth(couch.User.Username(), p)
		}
	}
	plain := *couch
	plain.User = nil
	for _, id := range []string{"foo", "empty", "imp", "up", "sixteen", "hex64", "gen0", "w1", "w2", "w4", "dash"} {
		want := leaves(t, plain.String(), src, id, couchAuth)
		if got := leaves(t, ts.url, "dev", id, nil); got != want {
			t.Errorf("%s in settee:\n%s\nCouchDB:\n%s", id, got, want)
		}
		if got := leaves(t, plain.String(), back, id, couchAuth); got != want {
			t.Errorf("%s back in CouchDB:\n%s\nfirst CouchDB:\n%s", id, got, want)
		}
	}
}
