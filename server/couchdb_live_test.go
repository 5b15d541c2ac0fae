package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/couchcorpus"
)

// liveCouch is an Apache CouchDB for the opt-in tests: SETTEE_COUCHDB_URL,
// an admin URL such as http://admin:pw@127.0.0.1:5984. CI has none.
func liveCouch(t *testing.T) *url.URL {
	t.Helper()
	raw := os.Getenv("SETTEE_COUCHDB_URL")
	if raw == "" {
		t.Skip("SETTEE_COUCHDB_URL is not set: this test needs a running Apache CouchDB 3 (an admin URL such as http://admin:pw@127.0.0.1:5984); CI has none")
	}
	u, err := url.Parse(strings.TrimSuffix(raw, "/"))
	if err != nil {
		t.Fatalf("SETTEE_COUCHDB_URL: %v", err)
	}
	return u
}

// couchCall sends one JSON request to the live CouchDB and decodes the
// answer into out (if not nil); it fails the test unless the status is want.
func couchCall(t *testing.T, c *url.URL, method, path string, body, out any, want int) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.String()+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// leaves reads every leaf of a document with its history and attachment
// bodies, in a canonical form: sorted by rev, attachment digests of
// compressible types dropped (CouchDB digests them gzipped).
func leaves(t *testing.T, base, db, id string, auth func(*http.Request)) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/"+db+"/"+url.PathEscape(id)+"?open_revs=all&revs=true&attachments=true", nil)
	req.Header.Set("Accept", "application/json")
	if auth != nil {
		auth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("status %d %s", resp.StatusCode, b)
	}
	var rows []map[string]map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatalf("%s/%s: %v", db, id, err)
	}
	var out []string
	for _, row := range rows {
		doc := row["ok"]
		if atts, ok := doc["_attachments"].(map[string]any); ok {
			for _, a := range atts {
				am := a.(map[string]any)
				if couchcorpus.Compressible(am["content_type"]) {
					delete(am, "digest")
				}
				delete(am, "encoding")
				delete(am, "encoded_length")
			}
		}
		js, _ := json.Marshal(doc)
		out = append(out, string(js))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestCouchDBReplicatorRoundTrip has a real CouchDB's replicator copy the
// corpus dataset (conflicts, tombstones, attachments, tricky ids) from
// CouchDB into Settee's server and back out into a new CouchDB database,
// one-shot and then continuous, and checks that every document's leaves
// come back identical.
func TestCouchDBReplicatorRoundTrip(t *testing.T) {
	couch := liveCouch(t)
	ts := newTServer(t, Config{})
	suffix := fmt.Sprint(time.Now().UnixNano())
	src, back := "settee_rt_src_"+suffix, "settee_rt_back_"+suffix
	t.Cleanup(func() {
		for _, db := range []string{src, back} {
			req, _ := http.NewRequest(http.MethodDelete, couch.String()+"/"+db, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	})
	couchAuth := func(r *http.Request) {
		if p, ok := couch.User.Password(); ok {
			r.SetBasicAuth(couch.User.Username(), p)
		}
	}
	plain := *couch
	plain.User = nil
	if err := couchcorpus.LoadDataset(context.Background(), http.DefaultClient, plain.String(), src, "dataset.ndjson", couchAuth); err != nil {
		t.Fatal(err)
	}
	replicate := func(body map[string]any) {
		t.Helper()
		var res map[string]any
		couchCall(t, couch, http.MethodPost, "/_replicate", body, &res, http.StatusOK)
		if res["ok"] != true {
			t.Fatalf("_replicate %v: %v", body, res)
		}
		t.Logf("_replicate %v -> %v", body["source"], res["history"])
	}
	start := time.Now()
	replicate(map[string]any{"source": couch.String() + "/" + src, "target": ts.url + "/dev", "create_target": true})
	t.Logf("CouchDB -> settee: %v", time.Since(start))
	start = time.Now()
	replicate(map[string]any{"source": ts.url + "/dev", "target": couch.String() + "/" + back, "create_target": true})
	t.Logf("settee -> CouchDB: %v", time.Since(start))

	lines, err := couchcorpus.DatasetLines("dataset.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, l := range lines {
		var h struct {
			ID string `json:"_id"`
		}
		json.Unmarshal(l, &h)
		if !strings.HasPrefix(h.ID, "_local/") {
			ids[h.ID] = true
		}
	}
	for id := range ids {
		want := leaves(t, plain.String(), src, id, couchAuth)
		if got := leaves(t, ts.url, "dev", id, nil); got != want {
			t.Errorf("%s in settee:\n%s\nCouchDB:\n%s", id, got, want)
		}
		if got := leaves(t, plain.String(), back, id, couchAuth); got != want {
			t.Errorf("%s back in CouchDB:\n%s\nfirst CouchDB:\n%s", id, got, want)
		}
	}
	t.Logf("%d documents identical in CouchDB, settee and back in CouchDB", len(ids))

	// Continuous, settee -> CouchDB: a write to settee shows in CouchDB.
	cont := map[string]any{"source": ts.url + "/dev", "target": couch.String() + "/" + back, "continuous": true}
	couchCall(t, couch, http.MethodPost, "/_replicate", cont, nil, http.StatusAccepted)
	defer func() {
		cont["cancel"] = true
		couchCall(t, couch, http.MethodPost, "/_replicate", cont, nil, http.StatusOK)
	}()
	ts.must(201, http.MethodPut, "/dev/live-after", map[string]any{"v": 1})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if leaves(t, ts.url, "dev", "live-after", nil) == leaves(t, plain.String(), back, "live-after", couchAuth) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a write to settee did not reach CouchDB through a continuous replication within 30 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
