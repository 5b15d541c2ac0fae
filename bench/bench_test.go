package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/localdb"
)

// TestMain lets the test binary serve as the harness's child process, as
// the bench binary does.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := runChild(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// harnessRun is what runHarness leaves: the results the harness wrote, its
// table, its work directory and its results.json.
type harnessRun struct {
	res            *Results
	stdout         string
	work, out, svg string
}

// runHarness runs the harness with args, in a work directory and an output
// directory of the test's, and reads back the results it wrote.
func runHarness(t *testing.T, timeout time.Duration, args ...string) *harnessRun {
	t.Helper()
	dir := t.TempDir()
	h := &harnessRun{work: filepath.Join(dir, "work"), out: filepath.Join(dir, "out", "results.json")}
	h.svg = strings.TrimSuffix(h.out, ".json") + ".svg"
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, append(args, "-workdir", h.work, "-out", h.out, "-root", "."), &stdout, &stderr)
	t.Logf("stderr:\n%s\nstdout:\n%s", stderr.String(), stdout.String())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	h.stdout = stdout.String()
	data, err := os.ReadFile(h.out)
	if err != nil {
		t.Fatal(err)
	}
	h.res = &Results{}
	if err := json.Unmarshal(data, h.res); err != nil {
		t.Fatalf("results.json does not parse: %v", err)
	}
	return h
}

// TestSmoke runs the whole harness on a tiny dataset: every phase, every
// contender (PouchDB included), against a pouchdb-server it starts.
// Phase find runs last and adds its two index design documents to the
// pulled store.
func TestSmoke(t *testing.T) {
	h := runHarness(t, 5*time.Minute, "-docs", "200", "-seed", "7", "-keep",
		"-phases", "pull,push,noop,incremental,find", "-find-queries", "20",
		"-contenders", "settee,pouchdb,limit,nostore")
	res, work := h.res, h.work
	ctx := context.Background()
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %q", res.Errors)
	}
	ds := &Dataset{Seed: 7, Docs: 200}
	if res.Dataset.Docs != 200 || res.Dataset.Attachments != 2 || res.Dataset.Conflicted == 0 || res.Dataset.Deleted == 0 {
		t.Errorf("dataset stats %+v: want 200 docs, 2 attachments, some conflicts and deletions", res.Dataset)
	}

	// The local store filled by our pull holds the source's documents.
	db, err := localdb.Open(filepath.Join(work, "settee.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := db.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.DocCount != int64(res.Dataset.Live+len(findIndexes)) || info.DocDelCount != int64(res.Dataset.Deleted) {
		t.Errorf("local store: doc_count %d, doc_del_count %d; want %d, %d", info.DocCount, info.DocDelCount, res.Dataset.Live, res.Dataset.Deleted)
	}
	// A changed document has the incremental step's revision.
	edited, err := ds.Edit(7)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := db.Get(ctx, edited.ID, localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Rev != edited.Leaves[0].Rev() {
		t.Errorf("%s: rev %s, want the edited %s", edited.ID, doc.Rev, edited.Leaves[0].Rev())
	}

	// Every contender ran and the ratios were computed.
	for name, m := range map[string]*Measure{
		"pull settee": res.Pull.Settee, "pull pouchdb": res.Pull.PouchDB,
		"push settee": res.Push.Settee, "push pouchdb": res.Push.PouchDB,
	} {
		if m == nil {
			t.Errorf("%s: no measure", name)
			continue
		}
		if m.Seconds <= 0 || m.DocsPerSec <= 0 || m.PeakRSS <= 0 || m.Requests <= 0 {
			t.Errorf("%s: implausible measure %+v", name, m)
		}
	}
	// The pull with no store read and handed over every revision, and
	// left the real pull's store alone (its counts are checked above).
	if ns := res.Pull.NoStore; ns == nil || ns.DocsRead != int64(res.Dataset.Leaves) || ns.DocsWritten != int64(res.Dataset.Leaves) || ns.Requests <= 0 {
		t.Errorf("pull with no store: %+v, want %d revisions read and written", ns, res.Dataset.Leaves)
	}
	if res.Ratios.PullTimeVsNoStore <= 0 || res.Ratios.NoStoreVsStreamLimit <= 0 || !strings.Contains(h.stdout, "no store (the target discards)") {
		t.Errorf("no-store ratios %+v, or no row in the table", res.Ratios)
	}
	if res.Pull.PullLimit == nil || res.Pull.PullLimit.Rows != res.Dataset.Live || res.Pull.PullLimit.InsertCPUSeconds <= 0 || res.Push.PushLimit == nil {
		t.Errorf("limits: pull %+v push %+v", res.Pull.PullLimit, res.Push.PushLimit)
	}
	r := res.Ratios
	if r.PullVsPouchDBDocsPerSec <= 0 || r.PushVsPouchDBDocsPerSec <= 0 || r.PullTimeVsLimit <= 0 || r.PushTimeVsLimit <= 0 || r.PullCPUVsInsertCPU <= 0 {
		t.Errorf("ratios not computed: %+v", r)
	}
	if res.Incremental == nil || res.Incremental.Settee == nil || res.Incremental.Settee.DocsRead != int64(ds.ChangedCount()) {
		t.Errorf("incremental: %+v, want %d docs read", res.Incremental, ds.ChangedCount())
	}
	if res.Noop == nil || res.Noop.Settee == nil || res.Noop.Settee.DocsRead != 0 {
		t.Errorf("no-op re-sync: %+v", res.Noop)
	}
	if len(res.Find) != 3 {
		t.Errorf("find: %d contenders, want settee, pouchdb and pouchdb-server", len(res.Find))
	}
	for _, f := range res.Find {
		if f.Queries != 20 || f.EqP50Ms <= 0 || f.RangeP50Ms <= 0 || f.EqP99Ms < f.EqP50Ms || f.IndexBuildSeconds <= 0 {
			t.Errorf("find %s: implausible %+v", f.Contender, f)
		}
	}
	agreed := 0
	for _, c := range res.Checks {
		if strings.HasPrefix(c, "find: ") && strings.Contains(c, "returns the same documents as settee") {
			agreed++
		}
	}
	if agreed != 2 {
		t.Errorf("find: %d agreement checks, want 2: %q", agreed, res.Checks)
	}
	if len(res.Targets) < 5 {
		t.Errorf("targets: %+v", res.Targets)
	}
	svg, err := os.ReadFile(h.svg)
	if err != nil || !bytes.HasPrefix(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("pull settee")) {
		t.Errorf("chart: %v %.100q", err, svg)
	}
	if !strings.Contains(h.stdout, "| pull") {
		t.Errorf("no table on stdout")
	}
}
