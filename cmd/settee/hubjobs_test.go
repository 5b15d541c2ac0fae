package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
)

var resumedRE = regexp.MustCompile(`resumed (\d+) replication`)

// TestHubJobsSurviveSIGKILL: a hub (settee serve) keeps a database in
// step with pouchdb-server both ways through two continuous _replicator
// documents; killed with SIGKILL while both sides are written to and
// started again on its folder and port, it resumes both jobs by itself
// (and says so), both sides end with the same ids and revisions, and no
// revision reaches pouchdb-server's _bulk_docs twice.
func TestHubJobsSurviveSIGKILL(t *testing.T) {
	pouch := testpeer.PouchDB(t)
	pouch.CreateDB(t, "cloud")
	counter := testutil.NewBulkDocsCounter(t, pouch.URL)
	proxyURL := counter.URL
	dir := t.TempDir()
	port := testpeer.FreePort(t)
	root := fmt.Sprintf("http://127.0.0.1:%d", port)
	start := func() (*exec.Cmd, *testutil.SyncBuffer) {
		cmd := exec.Command(settee, "serve", "--addr", fmt.Sprintf("127.0.0.1:%d", port), "--user", "admin", dir)
		cmd.Env = append(cleanEnv(), "SETTEE_PASSWORD=hubpw")
		out := &testutil.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, "serve prints its serving line", func() bool { return servingRE.MatchString(out.String()) })
		return cmd, out
	}
	stop := func(cmd *exec.Cmd, sig syscall.Signal) {
		_ = cmd.Process.Signal(sig)
		_ = cmd.Wait()
	}
	hub := strings.Replace(root, "http://", "http://admin:hubpw@", 1) + "/hub"
	put := func(u string, body any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPut, u, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("PUT %s: %d", u, res.StatusCode)
		}
	}
	cmd, _ := start()
	put(hub, nil)
	jobs := strings.Replace(root, "http://", "http://admin:hubpw@", 1) + "/_replicator/"
	put(jobs+"push", map[string]any{"source": hub, "target": proxyURL + "/cloud", "continuous": true, "worker_batch_size": 100})
	put(jobs+"pull", map[string]any{"source": proxyURL + "/cloud", "target": hub, "continuous": true})
	bulkDocs(t, hub, "hub-a", 300)
	bulkDocs(t, pouch.URL+"/cloud", "cloud-a", 200)
	testutil.Eventually(t, "both sides have the first 500", func() bool {
		return remoteDocCount(t, hub) == 500 && remoteDocCount(t, pouch.URL+"/cloud") == 500
	})
	bulkDocs(t, hub, "hub-b", 3000)
	testutil.Eventually(t, "the push copies hub-b", func() bool { return remoteDocCount(t, pouch.URL+"/cloud") > 500 })
	stop(cmd, syscall.SIGKILL) // mid-write: the push is copying hub-b in batches of 100
	t.Logf("killed with %d of the hub's 3300 documents in pouchdb-server", remoteDocCount(t, pouch.URL+"/cloud")-200)
	bulkDocs(t, pouch.URL+"/cloud", "cloud-b", 100)

	cmd, out := start()
	defer stop(cmd, syscall.SIGTERM)
	testutil.Eventually(t, "serve says it resumed the jobs", func() bool { return resumedRE.MatchString(out.String()) })
	if m := resumedRE.FindStringSubmatch(out.String()); m[1] != "2" {
		t.Errorf("serve resumed %s jobs, want 2:\n%s", m[1], out.String())
	}
	testutil.Eventually(t, "both sides have all 3600", func() bool {
		return remoteDocCount(t, hub) == 3600 && remoteDocCount(t, pouch.URL+"/cloud") == 3600
	})
	if a, b := allRevs(t, hub), allRevs(t, pouch.URL+"/cloud"); a != b {
		t.Errorf("the sides differ:\nhub   %.300s\ncloud %.300s", a, b)
	}
	// An operator lists the jobs; a stranger may not.
	list := ok(t, "replications", strings.Replace(root, "http://", "http://admin:hubpw@", 1))
	for _, want := range []string{"running      push: " + root + "/hub/ -> " + proxyURL + "/cloud/", "running      pull: " + proxyURL + "/cloud/ -> " + root + "/hub/"} {
		if !strings.Contains(list, want) {
			t.Errorf("settee replications does not show %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "hubpw") {
		t.Errorf("settee replications shows a password:\n%s", list)
	}
	failsWith(t, cli(t, nil, "replications", root), exitAuth, "admin")
	if n, _ := counter.Counts(); n < 3300 {
		t.Errorf("the proxy saw %d revisions written, want the hub's 3300", n)
	}
	if twice := counter.Twice(); len(twice) > 0 {
		t.Errorf("%d revisions written twice to pouchdb-server, such as %v", len(twice), twice[:min(3, len(twice))])
	}
}

// allRevs is a database's ids and winning revisions, as _all_docs lists them.
func allRevs(t *testing.T, dbURL string) string {
	t.Helper()
	res, err := http.Get(dbURL + "/_all_docs")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var all struct {
		Rows []struct {
			ID    string `json:"id"`
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
		} `json:"rows"`
	}
	if err := json.NewDecoder(res.Body).Decode(&all); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range all.Rows {
		b.WriteString(r.ID + "=" + r.Value.Rev + " ")
	}
	return b.String()
}
