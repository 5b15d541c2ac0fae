package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/server/servertest"
)

// step is one request of the "same answers" script.
type step struct {
	method, path, body string
	hdr                []string
	// cmp: "json" compares the whole JSON answer, "error" the status and
	// the error name, "status" the status only, "set" a JSON array as a
	// set.
	cmp string
	// ignore lists JSON members (at any depth) left out of the comparison.
	ignore []string
	// couch is, where pouchdb-server is known to differ from CouchDB, the
	// answer CouchDB gives: our status must be its status and our body
	// must contain it; pouchdb-server's answer is not compared.
	couch *couchAnswer
}

type couchAnswer struct {
	status int
	body   string // a JSON object whose members our answer must have
	why    string
}

// sameAnswersScript drives writes with new_edits=false and explicit revs,
// so revision ids are the same on both servers.
var sameAnswersScript = []step{
	{method: "PUT", path: "/sa", cmp: "json"},
	{method: "PUT", path: "/sa", cmp: "error"},
	{method: "GET", path: "/sa", cmp: "json", ignore: []string{"instance_start_time", "sizes", "purge_seq", "compact_running", "disk_format_version", "props", "adapter", "doc_del_count", "backend_adapter", "host", "auto_compaction", "disk_size", "data_size", "committed_update_seq", "cluster"}},
	{method: "GET", path: "/nosuchdb", cmp: "error"},
	{method: "GET", path: "/sa/missing", cmp: "json"},
	{method: "PUT", path: "/sa/d1?new_edits=false", body: `{"_rev":"1-abc","a":1}`, couch: putNoEdits("d1", "1-abc")},
	{method: "PUT", path: "/sa/d1?new_edits=false", body: `{"_rev":"2-def","_revisions":{"start":2,"ids":["def","abc"]},"a":2}`, couch: putNoEdits("d1", "2-def")},
	{method: "POST", path: "/sa/_bulk_docs", body: `{"new_edits":false,"docs":[{"_id":"d1","_rev":"2-eee","_revisions":{"start":2,"ids":["eee","abc"]},"a":3},{"_id":"d2","_rev":"1-aaa","_deleted":true}]}`, cmp: "json"},
	{method: "GET", path: "/sa/d1", cmp: "json"},
	{method: "GET", path: "/sa/d1?conflicts=true", cmp: "json"},
	{method: "GET", path: "/sa/d1?revs=true", cmp: "json"},
	{method: "GET", path: "/sa/d1?rev=2-def&revs=true", cmp: "json"},
	{method: "GET", path: "/sa/d1?rev=1-abc", cmp: "status"},
	{method: "GET", path: "/sa/d1?open_revs=all&revs=true", cmp: "set"},
	{method: "GET", path: `/sa/d1?open_revs=["2-def","3-fff"]`, cmp: "set"},
	{method: "GET", path: "/sa/d2", cmp: "json"},
	{method: "GET", path: "/sa/d2?rev=1-aaa", cmp: "json"},
	{method: "POST", path: "/sa/_revs_diff", body: `{"d1":["2-def","3-fff","1-abc"],"d9":["1-abcdef"]}`, cmp: "json", ignore: []string{"possible_ancestors"}}, // CouchDB lists them, PouchDB does not
	{method: "POST", path: "/sa/_bulk_get?revs=true", body: `{"docs":[{"id":"d1","rev":"2-def"},{"id":"d1","rev":"2-eee"}]}`, cmp: "json"},
	{method: "GET", path: "/sa/_changes", cmp: "json"},
	{method: "GET", path: "/sa/_changes?style=all_docs", cmp: "json", ignore: []string{"changes"}},
	{method: "GET", path: "/sa/_changes?since=1&limit=1", cmp: "json"},
	{method: "GET", path: "/sa/_changes?include_docs=true", cmp: "json"},
	{method: "POST", path: "/sa/_changes?filter=_doc_ids", body: `{"doc_ids":["d2"]}`, cmp: "json"},
	{method: "GET", path: "/sa/_changes?since=now", cmp: "json"},
	{method: "PUT", path: "/sa/_local/cp", body: `{"seq":1}`, cmp: "json"},
	{method: "GET", path: "/sa/_local/cp", cmp: "json"},
	{method: "PUT", path: "/sa/_local/cp", body: `{"_rev":"0-1","seq":2}`, cmp: "json"},
	{method: "GET", path: "/sa/_local/cp", cmp: "json"},
	{method: "GET", path: "/sa/_local/nope", cmp: "error"},
	{method: "GET", path: "/sa/_all_docs", cmp: "json"},
	{method: "GET", path: "/sa/_all_docs?include_docs=true", cmp: "json"},
	{method: "POST", path: "/sa/_all_docs", body: `{"keys":["d1","zz"]}`, cmp: "json", ignore: []string{"offset"}},
	{method: "GET", path: "/sa/d1/nope.txt", cmp: "error"},
	{method: "PUT", path: "/sa/d3", body: `{"x":`, cmp: "error"},
	{method: "PUT", path: "/sa/d3", body: `{"_bogus":1}`, couch: &couchAnswer{400, `{"error":"doc_validation"}`, "pouchdb-server answers 500"}},
	{method: "POST", path: "/sa/_ensure_full_commit", cmp: "status"},
	{method: "PUT", path: "/sa/d4?new_edits=false", body: `{"_rev":"1-a1","_attachments":{"t.txt":{"content_type":"text/plain","data":"aGVsbG8="}}}`, couch: putNoEdits("d4", "1-a1")},
	{method: "GET", path: "/sa/d4", cmp: "json"},
	{method: "GET", path: "/sa/d4?attachments=true", cmp: "json"},
	{method: "GET", path: "/sa/d4/t.txt", cmp: "status"},
	{method: "PUT", path: "/sa/_design/dd?new_edits=false", body: `{"_rev":"1-d1","views":{}}`, couch: putNoEdits("_design/dd", "1-d1")},
	{method: "GET", path: "/sa/_design/dd", cmp: "json"},
	{method: "PUT", path: "/sa/a%2Fb%20%C3%BC?new_edits=false", body: `{"_rev":"1-ab","x":1}`, couch: putNoEdits("a/b ü", "1-ab")},
	{method: "GET", path: "/sa/a%2Fb%20%C3%BC", cmp: "json"},
	{method: "GET", path: "/sa/a%2Fb%20%C3%BC?open_revs=all", cmp: "set"},
	// CouchDB's offset counts the rows before startkey (replayed from
	// CouchDB 3.5 in couchdb35_test.go); pouchdb-server says 0.
	{method: "GET", path: `/sa/_all_docs?startkey="a"&endkey="d2"`, cmp: "json", ignore: []string{"offset"}},
	{method: "GET", path: `/sa/_all_docs?descending=true&limit=2&skip=1`, cmp: "json"},
	// Not asked of pouchdb-server 4.2.0: filter=_design (404) and a
	// descending feed (crashes it); see changes_test.go.
	{method: "POST", path: "/sa/_bulk_docs", body: `{"docs":[{"_id":"d1","_rev":"1-abc","a":9}]}`, cmp: "json"},
	{method: "PUT", path: "/sa/d1", body: `{"_rev":"1-abc","a":9}`, cmp: "error"},
	// CouchDB refuses a DELETE without rev; pouchdb-server deletes.
	{method: "DELETE", path: "/sa/d1", couch: &couchAnswer{409, `{"error":"conflict"}`, "pouchdb-server deletes without a rev"}},
	{method: "DELETE", path: "/sa", cmp: "json"},
	{method: "GET", path: "/sa", cmp: "error"},
}

// TestSameAnswersAsPouchDBServer sends the same requests to pouchdb-server
// and to our server and compares the answers where CouchDB defines them.
func TestSameAnswersAsPouchDBServer(t *testing.T) {
	peer := testpeer.PouchDB(t)
	ours := servertest.Start(t, nil)
	for i, s := range sameAnswersScript {
		theirStatus, theirBody := testutil.Do(context.Background(), t, s.method, peer.URL+s.path, s.body, s.hdr...)
		ourStatus, ourBody := testutil.Do(context.Background(), t, s.method, ours.URL+s.path, s.body, s.hdr...)
		where := fmt.Sprintf("step %d: %s %s", i, s.method, s.path)
		if c := s.couch; c != nil {
			var want, got map[string]any
			json.Unmarshal([]byte(c.body), &want)
			json.Unmarshal(ourBody, &got)
			if ourStatus != c.status {
				t.Errorf("%s: status %d, CouchDB %d (%s): %s", where, ourStatus, c.status, c.why, ourBody)
			}
			for k, v := range want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s: %s = %v, CouchDB %v: %s", where, k, got[k], v, ourBody)
				}
			}
			continue
		}
		if theirStatus != ourStatus {
			t.Errorf("%s: status %d, pouchdb-server %d\nours:   %s\ntheirs: %s", where, ourStatus, theirStatus, ourBody, theirBody)
			continue
		}
		if s.cmp == "status" {
			continue
		}
		var ov, tv any
		if err := json.Unmarshal(ourBody, &ov); err != nil {
			t.Errorf("%s: our answer is not JSON: %s", where, ourBody)
			continue
		}
		if err := json.Unmarshal(theirBody, &tv); err != nil {
			t.Fatalf("%s: pouchdb-server's answer is not JSON: %s", where, theirBody)
		}
		switch s.cmp {
		case "error":
			om, _ := ov.(map[string]any)
			tm, _ := tv.(map[string]any)
			if om["error"] != tm["error"] {
				t.Errorf("%s: error %v, pouchdb-server %v", where, om["error"], tm["error"])
			}
			if _, ok := om["reason"].(string); !ok {
				t.Errorf("%s: no reason: %s", where, ourBody)
			}
			continue
		case "set":
			ov, tv = sortedList(ov), sortedList(tv)
		}
		// pending: CouchDB 3 ends every feed with it (see
		// couchdb35_test.go); pouchdb-server 4.2 never sends it.
		ignore := append([]string{"reason", "pending"}, s.ignore...)
		ov, tv = strip(ov, ignore), strip(tv, ignore)
		if !reflect.DeepEqual(ov, tv) {
			t.Errorf("%s: answers differ\nours:   %s\ntheirs: %s", where, ourBody, theirBody)
		}
	}
}

// strip removes the named members at every depth.
func strip(v any, names []string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			skip := false
			for _, n := range names {
				if k == n {
					skip = true
				}
			}
			if !skip {
				out[k] = strip(e, names)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = strip(e, names)
		}
		return out
	}
	return v
}

func sortedList(v any) any {
	l, ok := v.([]any)
	if !ok {
		return v
	}
	keys := make([]string, len(l))
	for i, e := range l {
		b, _ := json.Marshal(e)
		keys[i] = string(b)
	}
	sort.Strings(keys)
	out := make([]any, len(l))
	for i, k := range keys {
		json.Unmarshal([]byte(k), &out[i])
	}
	return out
}

// putNoEdits is CouchDB's answer to PUT ?new_edits=false (pouchdb-server
// answers []).
func putNoEdits(id, rev string) *couchAnswer {
	return &couchAnswer{201, `{"ok":true,"id":"` + id + `","rev":"` + rev + `"}`, "pouchdb-server answers []"}
}
