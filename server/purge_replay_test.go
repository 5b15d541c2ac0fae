package server

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// exchange is one recorded request and CouchDB 3.5.0's answer
// (testdata/couchdb3-purge/record.py).
type exchange struct {
	Note        string  `json:"note"`
	Method      string  `json:"method"`
	Path        string  `json:"path"`
	ContentType *string `json:"content_type"`
	ReqBody     *string `json:"req_body"`
	Status      int     `json:"status"`
	RespBody    string  `json:"resp_body"`
}

// TestPurgeReplayCouchDB35 replays the purge script recorded from a CouchDB
// 3.5.0 built from source, and wants the same status and the same JSON
// answer, but for what differs by design: sequences are integers here
// (GET /{db} is compared on its counts and purge_seq's number, _changes
// on its rows without seq), and a new edit's rev hash is ours.
func TestPurgeReplayCouchDB35(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "couchdb3-purge", "exchanges.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts := newTServer(t, Config{})
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var ex exchange
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatal(err)
		}
		n++
		var body any
		var hdr []string
		if ex.ReqBody != nil {
			body = *ex.ReqBody
		}
		if ex.ContentType != nil {
			hdr = []string{"Content-Type", *ex.ContentType}
		}
		r := ts.do(ex.Method, ex.Path, body, hdr...)
		if r.status != ex.Status {
			t.Errorf("%s (%s %s): status %d, CouchDB %d: %s", ex.Note, ex.Method, ex.Path, r.status, ex.Status, r.body)
			continue
		}
		var got, want any
		if err := json.Unmarshal(r.body, &got); err != nil {
			t.Errorf("%s: our answer is not JSON: %s", ex.Note, r.body)
			continue
		}
		if err := json.Unmarshal([]byte(ex.RespBody), &want); err != nil {
			t.Fatalf("%s: recorded answer is not JSON: %s", ex.Note, ex.RespBody)
		}
		got, want = normalize(ex, got), normalize(ex, want)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("%s (%s %s):\n ours    %s\n CouchDB %s", ex.Note, ex.Method, ex.Path, g, w)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("only %d exchanges recorded", n)
	}
}

// normalize keeps what both servers must agree on.
func normalize(ex exchange, v any) any {
	m, _ := v.(map[string]any)
	switch {
	case ex.Method == "GET" && ex.Path == "/pr":
		return map[string]any{"doc_count": m["doc_count"], "doc_del_count": m["doc_del_count"], "purge_seq": seqNumber(m["purge_seq"])}
	case strings.HasPrefix(ex.Path, "/pr/_changes"):
		// CouchDB's q shards merge their feeds in no global order: the
		// rows are compared as a set, by id.
		rows := map[string]any{}
		for _, r := range m["results"].([]any) {
			row := r.(map[string]any)
			delete(row, "seq")
			rows[row["id"].(string)] = row
		}
		return rows
	case ex.Path == "/pr/_purged_infos" && m != nil:
		// One record per request; their order across shards is CouchDB's
		// merge order, so they are compared as a set.
		set := map[string]bool{}
		for _, r := range m["purged_infos"].([]any) {
			b, _ := json.Marshal(r)
			set[string(b)] = true
		}
		return set
	case ex.Method == "PUT" && ex.Path == "/pr/a":
		// A new edit: the rev's generation is CouchDB's, its hash ours.
		m["rev"] = strings.SplitN(m["rev"].(string), "-", 2)[0]
		return m
	}
	return v
}

// seqNumber reads a sequence's number: ours is a JSON number, CouchDB 3's
// a string "N-opaque".
func seqNumber(v any) any {
	switch s := v.(type) {
	case float64:
		return s
	case string:
		n, _, _ := strings.Cut(s, "-")
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return s
		}
		return f
	}
	return v
}
