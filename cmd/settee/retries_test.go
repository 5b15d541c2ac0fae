package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRetriesMeanAttemptsPerStep: --retries 3 is at most 4 attempts of a
// step (here, reading the changes feed of a source that answers 503), not
// retries of requests inside retries of steps.
func TestRetriesMeanAttemptsPerStep(t *testing.T) {
	srv, changes := failingSource(t, http.StatusServiceUnavailable, []byte(`{"error":"service_unavailable","reason":"restarting"}`))
	r := cli(t, nil, "pull", "--json", "--retries", "3", filepath.Join(t.TempDir(), "x.db"), srv.URL+"/db")
	if r.code == 0 {
		t.Fatalf("pull from a source answering 503 succeeded: %s", r.stdout)
	}
	if n := changes.Load(); n != 4 {
		t.Fatalf("--retries 3: the changes feed was asked %d times, want 4 (%s)", n, r.stderr)
	}
	// The end event counts the retries (the replicator's, not the client's).
	if evs := events(t, r.stdout); evs[len(evs)-1]["retries"] != float64(3) {
		t.Fatalf("end event %v, want 3 retries", evs[len(evs)-1])
	}
}

// TestClusterNodedownExitsTransient: a cluster answering 412 nodedown (the
// recorded body) for longer than --retries allows is a transient failure:
// each attempt is made, and the exit code is 3, not 1.
func TestClusterNodedownExitsTransient(t *testing.T) {
	body, err := os.ReadFile("../../testdata/cluster/nodedown.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, changes := failingSource(t, http.StatusPreconditionFailed, body)
	r := cli(t, nil, "pull", "--retries", "2", filepath.Join(t.TempDir(), "x.db"), srv.URL+"/db")
	failsWith(t, r, exitTransient, "412", "nodedown", "progress not possible", "run the same command again")
	if n := changes.Load(); n != 3 {
		t.Fatalf("--retries 2: the changes feed was asked %d times, want 3", n)
	}
}

// failingSource is a source database "db" that exists and has no
// checkpoint, whose every other request (the changes feed first) answers
// status with body; it counts the changes requests.
func failingSource(t *testing.T, status int, body []byte) (*httptest.Server, *atomic.Int32) {
	var changes atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/db":
			_, _ = w.Write([]byte(`{"db_name":"db","doc_count":1,"doc_del_count":0,"update_seq":"1-x","instance_start_time":"0"}`))
		case strings.HasPrefix(r.URL.Path, "/db/_local/"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"not_found","reason":"missing"}`))
		default:
			if r.URL.Path == "/db/_changes" {
				changes.Add(1)
			}
			w.WriteHeader(status)
			_, _ = w.Write(body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &changes
}
