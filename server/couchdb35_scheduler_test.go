package server

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/couchcorpus"
)

// schedStep is one step of scheduler.json, the script CouchDB 3.5's
// scheduler answers were recorded with.
type schedStep struct {
	Op     string            `json:"op"`
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Note   string            `json:"note"`
	As     json.RawMessage   `json:"as"`
	Body   json.RawMessage   `json:"body"`
	Save   map[string]string `json:"save"`
	Record *bool             `json:"record"`
	Sleep  float64           `json:"sleep"`
	Wait   *schedWait        `json:"wait"`
}

// schedWait is a step's wait: GET Path until its status (Until
// "status") or its member Field is Value.
type schedWait struct {
	Path, Until, Field string
	Value              any
	Seconds            float64
}

// schedulerDifferences are the recorded exchanges where Settee's
// scheduler answers otherwise than CouchDB 3.5, with the reason. The
// replay fails on any other difference, and on a listed one that no
// longer differs.
var schedulerDifferences = map[string][]string{
	"A replication id rests on the endpoints' URLs, the filter, ids, selector and mode, not on their headers: a document naming the same URLs with an Authorization header is a duplicate (failed); a job without credentials on the hub's admin-only databases crashes at its first request, where CouchDB still shows it running.": {
		"couchdb35-extra/scheduler#74",
	},
	"A continuous job reports its first batch at once (_scheduler info, _active_tasks), where CouchDB waits for its first checkpoint; with the filter's job, _scheduler/jobs lists one more.": {
		"couchdb35-extra/scheduler#78", "couchdb35-extra/scheduler#79",
	},
	"POST /_replicate refuses local database names, as _replicator documents do (500 local_endpoints_not_supported); CouchDB accepts them there.": {
		"couchdb35-extra/scheduler#83",
	},
	"POST /_replicate of a replication a _replicator document runs already answers 500 error, naming the document, instead of running it a second time beside it. CouchDB answered the document job's own error (db_not_found), and its _scheduler/jobs no longer lists that job (sched-notarget) afterwards, its document still there; this hub's job goes on with its document.": {
		"couchdb35-extra/scheduler#84", "couchdb35-extra/scheduler#94",
	},
}

// TestCouchDB35Scheduler replays scheduler.json against a hub set up as
// the recording CouchDB (admin "admin", password "pw"; the endpoints'
// host is the hub's) and compares the shapes of the answers: statuses,
// error names and reasons, and in _scheduler and _active_tasks answers
// every entry's members and its state, document, endpoints and kind.
// Times, pids, sequences, replication ids and Erlang crash reasons are
// CouchDB's own and not compared.
func TestCouchDB35Scheduler(t *testing.T) {
	t.Parallel()
	replaySchedScript(t, "scheduler", nil, schedulerDifferences, "schedulerDifferences",
		func(e *couchcorpus.Exchange, _ string, status int, got []byte, fill func(string) string) []string {
			return schedulerDiffs(e, status, got, fill)
		})
}

// replaySchedScript replays the script NAME.json of the recordings in
// authDir against a new hub set up as the recording CouchDB (admin
// "admin", password "pw", the script's users created by its own steps;
// the endpoints' host is the hub's), comparing each recorded exchange of
// NAME.jsonl with diff, which is told who asked. A step's "as" is a user
// of the script, null for anonymous (""), the admin when absent. The replay fails on a difference not
// in differences (by "couchdb35-extra/NAME#seq") and on a listed one that
// no longer differs. waits adds waits to steps ("METHOD path"), where the
// recording CouchDB's timing made a step see a job's end.
func replaySchedScript(t *testing.T, name string, waits map[string]*schedWait, differences map[string][]string, table string,
	diff func(e *couchcorpus.Exchange, as string, status int, got []byte, fill func(string) string) []string) {
	var script struct {
		Users    map[string]string `json:"users"`
		Requests []schedStep       `json:"requests"`
	}
	if err := json.Unmarshal(readFile(t, authDir+name+".json"), &script); err != nil {
		t.Fatal(err)
	}
	exchanges, err := couchcorpus.ReadExchanges(authDir + name + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ts := newReplHub(t, Config{Users: map[string]string{"admin": "pw"}})
	host := strings.TrimPrefix(ts.url, "http://")
	saved := map[string]string{}
	fill := func(s string) string {
		s = strings.ReplaceAll(s, "127.0.0.1:5984", host)
		for k, v := range saved {
			s = strings.ReplaceAll(s, "{{"+k+"}}", v)
		}
		return s
	}
	send := func(method, path, body string, as json.RawMessage) (int, []byte) {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, ts.url+fill(path), rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "application/json")
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		var user string
		switch {
		case len(as) == 0:
			req.SetBasicAuth("admin", "pw")
		case json.Unmarshal(as, &user) == nil && user != "":
			req.SetBasicAuth(user, script.Users[user])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	listed := map[string]string{}
	for reason, keys := range differences {
		for _, k := range keys {
			listed[k] = reason
		}
	}
	next := 0
	for _, st := range script.Requests {
		if st.Op == "ensure_deleted" {
			if status, b := send("GET", st.Path, "", nil); status == 200 {
				var doc struct {
					Rev string `json:"_rev"`
				}
				_ = json.Unmarshal(b, &doc)
				send("DELETE", st.Path+"?rev="+doc.Rev, "", nil)
			}
		}
		if st.Op != "" || st.Wait != nil && st.Wait.Until == "absent" {
			continue // the purges clean a reused CouchDB up, the waits for its old databases to go: this hub is new
		}
		w := st.Wait
		if extra := waits[st.Method+" "+st.Path]; extra != nil {
			w = extra
		}
		if w != nil {
			bound := time.Duration(max(w.Seconds, 60) * float64(time.Second)) // generous: a loaded machine, -race
			for end := time.Now().Add(bound); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				status, b := send("GET", w.Path, "", nil)
				var v any
				_ = json.Unmarshal(b, &v)
				if w.Until == "status" && fmt.Sprint(status) == fmt.Sprint(w.Value) ||
					w.Until != "status" && fmt.Sprint(field(v, w.Field)) == fmt.Sprint(w.Value) {
					break
				}
			}
		}
		if st.Sleep > 0 {
			time.Sleep(time.Duration(st.Sleep * float64(time.Second)))
		}
		body := ""
		if len(st.Body) > 0 {
			var s string
			if json.Unmarshal(st.Body, &s) == nil {
				body = s
			} else {
				body = string(st.Body)
			}
		}
		status, got := send(st.Method, st.Path, fill(body), st.As)
		var m map[string]any
		if json.Unmarshal(got, &m) == nil {
			for k, f := range st.Save {
				if s, ok := m[f].(string); ok {
					saved[k] = s
				}
			}
		}
		if st.Record != nil && !*st.Record {
			continue
		}
		if next >= len(exchanges) {
			t.Fatalf("more steps than the %d recorded exchanges", len(exchanges))
		}
		e := &exchanges[next]
		next++
		as := "admin"
		if len(st.As) > 0 {
			as = ""
			_ = json.Unmarshal(st.As, &as)
		}
		diffs := diff(e, as, status, got, fill)
		reportDiffs(t, "couchdb35-extra/"+name+"#"+strconv.Itoa(e.Seq), e, diffs, listed, table, fmt.Sprintf("\n\tgot %s", got))
	}
	if next != len(exchanges) {
		t.Fatalf("%d recorded exchanges, %d replayed", len(exchanges), next)
	}
}

// field reads a dotted path ("0.docs_written") of a JSON value.
func field(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// schedulerDiffs compares an answer with CouchDB's recorded one, as
// TestCouchDB35Scheduler says.
func schedulerDiffs(e *couchcorpus.Exchange, status int, got []byte, fill func(string) string) []string {
	var diffs []string
	if status != e.Status {
		diffs = append(diffs, fmt.Sprintf("status %d, CouchDB %d", status, e.Status))
	}
	var want, have any
	if json.Unmarshal([]byte(fill(e.RespBody)), &want) != nil || json.Unmarshal(got, &have) != nil {
		return diffs
	}
	wm, _ := want.(map[string]any)
	hm, _ := have.(map[string]any)
	if wm != nil && wm["error"] != nil {
		if hm == nil || hm["error"] != wm["error"] {
			diffs = append(diffs, fmt.Sprintf("error %v, CouchDB %v", field(have, "error"), wm["error"]))
		} else if e.Status != 500 && e.Status != 400 && hm["reason"] != wm["reason"] {
			diffs = append(diffs, fmt.Sprintf("reason %q, CouchDB %q", hm["reason"], wm["reason"]))
		}
		return diffs
	}
	path := e.Path
	switch {
	case strings.HasPrefix(path, "/_scheduler/jobs/") || strings.HasPrefix(path, "/_scheduler/docs/_replicator/"):
		diffs = append(diffs, entryDiffs("body", wm, hm)...)
	case strings.HasPrefix(path, "/_scheduler/"):
		list := "docs"
		if strings.HasPrefix(path, "/_scheduler/jobs") {
			list = "jobs"
		}
		if fmt.Sprint(field(want, "total_rows")) != fmt.Sprint(field(have, "total_rows")) {
			diffs = append(diffs, fmt.Sprintf("total_rows %v, CouchDB %v", field(have, "total_rows"), field(want, "total_rows")))
		}
		diffs = append(diffs, listDiffs(list, field(want, list), field(have, list))...)
	case path == "/_active_tasks":
		diffs = append(diffs, listDiffs("tasks", want, have)...)
	}
	return diffs
}

// listDiffs compares two lists of entries, matched by doc_id (then id).
func listDiffs(name string, want, have any) []string {
	wl, _ := want.([]any)
	hl, _ := have.([]any)
	keyOf := func(v any) string {
		return fmt.Sprint(field(v, "doc_id"), "|", field(v, "source"), "|", field(v, "target"))
	}
	byKey := map[string]map[string]any{}
	for _, h := range hl {
		byKey[keyOf(h)], _ = h.(map[string]any)
	}
	var diffs []string
	if len(wl) != len(hl) {
		diffs = append(diffs, fmt.Sprintf("%s: %d entries, CouchDB %d", name, len(hl), len(wl)))
	}
	for _, w := range wl {
		k := keyOf(w)
		h, ok := byKey[k]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: no entry for %s", name, k))
			continue
		}
		wm := w.(map[string]any)
		if name == "tasks" {
			wm, h = maps.Clone(wm), maps.Clone(h)
			delete(wm, "database") // CouchDB's names its shard's file
			delete(h, "database")
		}
		diffs = append(diffs, entryDiffs(name+"["+k+"]", wm, h)...)
	}
	return diffs
}

// compared are the members of an entry whose values must be CouchDB's.
var compared = []string{"state", "doc_id", "database", "source", "target", "type", "continuous", "user"}

// entryDiffs compares one job, document or task: its members, the
// values of compared, and the members of its info.
func entryDiffs(name string, want, have map[string]any) []string {
	var diffs []string
	if !reflect.DeepEqual(keys(want), keys(have)) {
		diffs = append(diffs, fmt.Sprintf("%s members %v, CouchDB %v", name, keys(have), keys(want)))
	}
	for _, k := range compared {
		if w, ok := want[k]; ok && !reflect.DeepEqual(w, have[k]) {
			diffs = append(diffs, fmt.Sprintf("%s.%s %v, CouchDB %v", name, k, have[k], w))
		}
	}
	wi, _ := want["info"].(map[string]any)
	hi, _ := have["info"].(map[string]any)
	// CouchDB's info stays empty (or null) until a running job's first
	// checkpoint; this server's has its stats once the first batch is in
	// (schedulerDifferences says why). Whether that batch is in when the
	// request comes is timing, so an empty info of CouchDB's matches ours
	// with or without them.
	if len(wi) == 0 && hi != nil && want["state"] == "running" {
		return diffs
	}
	if (wi == nil) != (hi == nil) || !reflect.DeepEqual(keys(wi), keys(hi)) {
		diffs = append(diffs, fmt.Sprintf("%s.info members %v, CouchDB %v", name, keys(hi), keys(wi)))
	}
	return diffs
}

func keys(m map[string]any) []string {
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
