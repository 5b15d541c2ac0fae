package server_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/server"
	"github.com/settee/settee/server/servertest"
)

// pouchEntry is one document as the Node script dumps it.
type pouchEntry struct {
	Leaves        []string                 `json:"leaves"`
	DeletedLeaves []string                 `json:"deleted_leaves"`
	Winner        string                   `json:"winner,omitempty"`
	Conflicts     []string                 `json:"conflicts,omitempty"`
	Deleted       bool                     `json:"deleted,omitempty"`
	Body          map[string]any           `json:"body,omitempty"`
	Attachments   map[string]pouchAttEntry `json:"attachments,omitempty"`
}

type pouchAttEntry struct {
	Digest      string `json:"digest"`
	ContentType string `json:"content_type"`
	MD5         string `json:"md5"`
	Length      int    `json:"length"`
}

func md5of(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func mustDo(t *testing.T, want int, method, u, body string, hdr ...string) []byte {
	t.Helper()
	st, b := testutil.Do(context.Background(), t, method, u, body, hdr...)
	if st != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, u, st, want, b)
	}
	return b
}

// seedForPouch writes what the script expects to find on the server.
func seedForPouch(t *testing.T, db string) {
	mustDo(t, 201, "PUT", db+"/s1", `{"a":1}`)
	mustDo(t, 201, "PUT", db+"/s2/pic.bin", "server bytes", "Content-Type", "image/x-test")
	mustDo(t, 201, "PUT", db+"/conf?new_edits=false", `{"_rev":"2-aaa","_revisions":{"start":2,"ids":["aaa","111"]},"v":"a"}`)
	mustDo(t, 201, "PUT", db+"/conf?new_edits=false", `{"_rev":"2-bbb","_revisions":{"start":2,"ids":["bbb","111"]},"v":"b"}`)
	var ok struct{ Rev string }
	json.Unmarshal(mustDo(t, 201, "PUT", db+"/gone", `{"soon":"deleted"}`), &ok)
	mustDo(t, 200, "DELETE", db+"/gone?rev="+ok.Rev, "")
	mustDo(t, 201, "PUT", db+"/_design/dd", `{"views":{}}`)
	mustDo(t, 201, "PUT", db+"/"+strings.ReplaceAll(url.PathEscape("we/ird+id ü"), "+", "%2B"), `{"tricky":true}`)
}

// storeView reads the server's own view of every document over HTTP, in
// the dump's shape.
func storeView(t *testing.T, db string) map[string]pouchEntry {
	var ch struct {
		Results []struct{ ID string }
	}
	json.Unmarshal(mustDo(t, 200, "GET", db+"/_changes?style=all_docs", ""), &ch)
	out := map[string]pouchEntry{}
	for _, r := range ch.Results {
		esc := strings.ReplaceAll(url.PathEscape(r.ID), "+", "%2B")
		if strings.HasPrefix(r.ID, "_design/") {
			esc = "_design/" + url.PathEscape(strings.TrimPrefix(r.ID, "_design/"))
		}
		var leaves []struct{ OK map[string]any }
		json.Unmarshal(mustDo(t, 200, "GET", db+"/"+esc+"?open_revs=all", ""), &leaves)
		e := pouchEntry{Leaves: []string{}, DeletedLeaves: []string{}}
		for _, l := range leaves {
			if l.OK["_deleted"] == true {
				e.DeletedLeaves = append(e.DeletedLeaves, l.OK["_rev"].(string))
			} else {
				e.Leaves = append(e.Leaves, l.OK["_rev"].(string))
			}
		}
		sort.Strings(e.Leaves)
		sort.Strings(e.DeletedLeaves)
		st, b := testutil.Do(context.Background(), t, "GET", db+"/"+esc+"?conflicts=true", "")
		if st == 404 {
			e.Deleted = true
			out[r.ID] = e
			continue
		}
		var doc map[string]any
		json.Unmarshal(b, &doc)
		e.Winner = doc["_rev"].(string)
		e.Conflicts = []string{}
		for _, c := range asList(doc["_conflicts"]) {
			e.Conflicts = append(e.Conflicts, c.(string))
		}
		sort.Strings(e.Conflicts)
		e.Body = map[string]any{}
		for k, v := range doc {
			if !strings.HasPrefix(k, "_") {
				e.Body[k] = v
			}
		}
		e.Attachments = map[string]pouchAttEntry{}
		atts, _ := doc["_attachments"].(map[string]any)
		for name, a := range atts {
			am := a.(map[string]any)
			bytes := mustDo(t, 200, "GET", db+"/"+esc+"/"+url.PathEscape(name), "")
			e.Attachments[name] = pouchAttEntry{Digest: am["digest"].(string), ContentType: am["content_type"].(string), MD5: md5of(bytes), Length: len(bytes)}
		}
		out[r.ID] = e
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// PouchDB 9 replicates with our server both ways, one-shot and live,
// including conflicts, deletions and attachments; afterwards PouchDB's
// view of both sides and the server's own view agree.
func TestPouchDBReplication(t *testing.T) {
	reqLog := &testutil.SyncBuffer{}
	inst := servertest.Start(t, &server.Config{Logger: slog.New(slog.NewTextHandler(reqLog, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	db := inst.CreateDB(t, "pdb")
	seedForPouch(t, db)

	out := testpeer.NodeScript(t, 3*time.Minute, "server/pouchdb-replicate.js", db)
	var res struct {
		Log    []string
		Local  map[string]pouchEntry
		Remote map[string]pouchEntry
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("script output: %v\n%s", err, out)
	}
	t.Logf("pouchdb: %v", res.Log)
	// What PouchDB 9 asked for: the replication protocol's endpoints.
	used := endpoints(reqLog.String())
	t.Logf("requests: %v", used)
	for _, want := range []string{"GET /pdb/", "POST /pdb/_revs_diff", "POST /pdb/_bulk_docs", "POST /pdb/_bulk_get", "GET /pdb/_changes", "PUT /pdb/_local", "GET /pdb/_local"} {
		if used[want] == 0 {
			t.Errorf("PouchDB never sent %s", want)
		}
	}
	if used["5xx"] > 0 {
		t.Errorf("%d requests failed with 5xx", used["5xx"])
	}
	if !reflect.DeepEqual(res.Local, res.Remote) {
		t.Errorf("PouchDB's local and remote views differ:\nlocal:  %+v\nremote: %+v", res.Local, res.Remote)
	}
	store := storeView(t, db)
	for id, e := range store {
		if e.Attachments == nil {
			continue
		}
		// PouchDB's dump has no attachments member for a doc without any.
		if len(e.Attachments) == 0 {
			e.Attachments = map[string]pouchAttEntry{}
		}
		store[id] = e
	}
	for id, want := range store {
		got, ok := res.Remote[id]
		if !ok {
			t.Errorf("PouchDB does not see %q", id)
			continue
		}
		if !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Errorf("%q:\npouchdb: %+v\nstore:   %+v", id, got, want)
		}
	}
	if len(store) != len(res.Remote) {
		t.Errorf("store has %d docs, PouchDB sees %d", len(store), len(res.Remote))
	}

	// Facts the scenario must have produced.
	conf := store["conf"]
	if strings.Join(conf.Leaves, ",") != "2-aaa,2-bbb,2-ccc" || conf.Winner != "2-ccc" {
		t.Errorf("conf: %+v", conf)
	}
	for _, id := range []string{"s1", "gone", "pdel"} {
		if !store[id].Deleted {
			t.Errorf("%s is not deleted on the server: %+v", id, store[id])
		}
		if !res.Local[id].Deleted {
			t.Errorf("%s is not deleted in PouchDB: %+v", id, res.Local[id])
		}
	}
	if a := store["p2"].Attachments["hello.txt"]; a.MD5 != md5of([]byte("hello from pouchdb")) || a.Digest != a.MD5 {
		t.Errorf("p2 attachment on the server: %+v", a)
	}
	if a := store["pbig"].Attachments["big.bin"]; a.Length != 300*1024 || a.MD5 != md5of(bytes.Repeat([]byte{7}, 300*1024)) {
		t.Errorf("pbig attachment on the server: %+v", a)
	}
	if a := res.Local["s2"].Attachments["pic.bin"]; a.MD5 != md5of([]byte("server bytes")) || a.ContentType != "image/x-test" {
		t.Errorf("s2 attachment in PouchDB: %+v", a)
	}
	if a := store["live-local"].Attachments["note.txt"]; a.MD5 != md5of([]byte("live attachment")) {
		t.Errorf("live attachment on the server: %+v", a)
	}
	for _, id := range []string{"live-remote", "_design/dd", "we/ird+id ü", "p1"} {
		if res.Local[id].Winner == "" || store[id].Winner != res.Local[id].Winner {
			t.Errorf("%s: local %+v, server %+v", id, res.Local[id], store[id])
		}
	}
}

// endpoints counts the requests of a debug log by method and endpoint.
func endpoints(log string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		var method, path, status string
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "method="); ok {
				method = v
			}
			if v, ok := strings.CutPrefix(f, "path="); ok {
				path = v
			}
			if v, ok := strings.CutPrefix(f, "status="); ok {
				status = v
			}
		}
		if method == "" {
			continue
		}
		parts := strings.SplitN(path, "/", 4)
		key := path
		if len(parts) >= 3 {
			key = "/" + parts[1] + "/" + parts[2]
			if parts[2] != "" && !strings.HasPrefix(parts[2], "_") {
				key = "/" + parts[1] + "/{doc}"
			}
		}
		out[method+" "+key]++
		if status >= "500" {
			out["5xx"]++
		}
	}
	return out
}

// normalize makes nil and empty slices and maps compare equal and drops
// attachment content types PouchDB does not keep on tombstones.
func normalize(e pouchEntry) pouchEntry {
	if len(e.Leaves) == 0 {
		e.Leaves = nil
	}
	if len(e.DeletedLeaves) == 0 {
		e.DeletedLeaves = nil
	}
	if len(e.Conflicts) == 0 {
		e.Conflicts = nil
	}
	if len(e.Attachments) == 0 {
		e.Attachments = nil
	}
	if len(e.Body) == 0 {
		e.Body = nil
	}
	return e
}

// PouchDB replicates with a server that has users: refused anonymously,
// accepted with basic auth and with an AuthSession cookie.
func TestPouchDBAuth(t *testing.T) {
	inst := servertest.Start(t, &server.Config{Users: map[string]string{"ann": "pw-ann"}})
	db := inst.CreateDB(t, "authdb", "ann", "pw-ann")
	out := testpeer.NodeScript(t, 3*time.Minute, "server/pouchdb-auth.js", db, "ann", "pw-ann")
	var res struct {
		Anonymous  any
		BasicPush  int
		Login      int
		CookieName string
		CookiePull int
		PulledIDs  []string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Anonymous != 401.0 || res.BasicPush != 1 || res.Login != 200 || res.CookieName != "AuthSession" ||
		res.CookiePull != 1 || strings.Join(res.PulledIDs, ",") != "from-pouch" {
		t.Fatalf("pouchdb with auth: %s", out)
	}
}
