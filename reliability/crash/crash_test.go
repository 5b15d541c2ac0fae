// Package crash kills `settee pull` and `settee push` processes with SIGKILL
// at random moments, many times, restarting them each time, and checks that
// the result is complete, the store intact (PRAGMA integrity_check) and
// that no revision was applied twice.
package crash

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println("reliability/crash:", rtest.Count.Report())
	os.Exit(code)
}

// kills is the number of SIGKILLs per test (SETTEE_SOAK=1: 200).
func kills() int {
	if os.Getenv("SETTEE_SOAK") != "" {
		return 200
	}
	return 24
}

// seed is the test's seed: SETTEE_SEED replays one.
func seed(t *testing.T) int64 {
	if s := os.Getenv("SETTEE_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return time.Now().UnixNano() % 1e9
}

// buildSettee builds ./cmd/settee once into a temporary directory.
func buildSettee(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "settee")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/settee")
	cmd.Dir = testpeer.RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build settee: %v\n%s", err, out)
	}
	return bin
}

func TestKillPull(t *testing.T) { killLoop(t, true) }
func TestKillPush(t *testing.T) { killLoop(t, false) }

// killLoop starts `settee pull|push` again and again, killing it with
// SIGKILL after a random delay; between kills the source gets new
// documents, so every run has work to do when it is killed. A last run
// completes, and both sides must then hold the same revisions, the store
// pass PRAGMA integrity_check and its invariants, and the target's
// update_seq show no revision written twice.
func killLoop(t *testing.T, pull bool) {
	bin := buildSettee(t)
	sd := seed(t)
	t.Logf("seed %d (replay with SETTEE_SEED=%d)", sd, sd)
	rng := rand.New(rand.NewSource(sd))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	pouch := testpeer.PouchDB(t)
	dbURL := pouch.CreateDB(t, "crash")
	path := filepath.Join(t.TempDir(), "local.sqlite")
	withStore := func(fn func(db *localdb.DB)) {
		db, err := localdb.Open(path, nil)
		if err != nil {
			t.Fatalf("open the store after a kill: %v", err)
		}
		defer db.Close()
		fn(db)
	}
	addDocs := func(prefix string, n int) {
		docs := rtest.Gen(rng, prefix, n, prefix == "a", prefix == "a")
		if pull {
			rtest.WriteRemote(ctx, t, dbURL, docs)
		} else {
			withStore(func(db *localdb.DB) { rtest.WriteLocal(ctx, t, db, docs) })
		}
	}
	addDocs("a", 300)

	verb := "push"
	if pull {
		verb = "pull"
	}
	run := func(killAfter time.Duration) (killed bool, out string) {
		var buf bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, verb, "--retries", "1", "--json", path, dbURL)
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if killAfter < 0 {
			if err := <-done; err != nil {
				t.Fatalf("settee %s: %v\n%s", verb, err, buf.String())
			}
			return false, buf.String()
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("settee %s: %v\n%s", verb, err, buf.String())
			}
			return false, buf.String()
		case <-time.After(killAfter):
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := <-done
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true, buf.String()
		}
		if err != nil {
			t.Fatalf("settee %s: %v\n%s", verb, err, buf.String())
		}
		return false, buf.String()
	}

	crashes, completed, midTransfer, checked := 0, 0, 0, 0
	// Kill delays are drawn up to a bit more than the last run that
	// completed took, so kills land all along a run (start-up, reading,
	// writing, checkpointing) rather than mostly at start-up.
	maxDelay := 600 * time.Millisecond
	for i := 0; crashes < kills() && i < 4*kills(); i++ {
		start := time.Now()
		killed, out := run(time.Duration(rng.Int63n(int64(maxDelay))))
		if killed {
			crashes++
			rtest.Count.Crashes.Add(1)
			if strings.Contains(out, `"state":"active"`) {
				midTransfer++
			}
			if m := repIDRe.FindStringSubmatch(out); m != nil {
				checked += checkAfterKill(ctx, t, path, dbURL, m[1], pull)
			}
		} else {
			completed++
			maxDelay = max(time.Since(start)*5/4, 100*time.Millisecond)
		}
		addDocs(fmt.Sprintf("k%d-", i), 20+rng.Intn(60))
	}
	if crashes < kills() {
		t.Fatalf("only %d of %d runs were killed while running (%d completed first)", crashes, kills(), completed)
	}
	_, out := run(-1)
	t.Logf("%d runs killed (%d while transferring), %d completed before the kill; last run: %.200s", crashes, midTransfer, completed, out)
	t.Logf("replication logs checked after kills: %d", checked)
	if midTransfer == 0 {
		t.Errorf("no kill landed after the transfer started")
	}

	// The store survived every kill.
	sqlDB, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var ok string
	if err := sqlDB.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check: %q %v", ok, err)
	}
	sqlDB.Close()

	withStore(func(db *localdb.DB) {
		if err := db.CheckInvariants(ctx); err != nil {
			t.Errorf("invariants: %v", err)
		}
		a := rtest.LocalSnapshot(ctx, t, db)
		b := rtest.RemoteSnapshot(ctx, t, dbURL)
		if d := rtest.Diff(a, b, 10); len(d) > 0 {
			rtest.Count.Lost.Add(int64(len(d)))
		}
		rtest.RequireEqual(t, "local vs remote after the kills", a, b)
		// Every leaf is written once on its source by the test and once on
		// the target by the replicator: more sequences than leaves on the
		// target means a revision applied twice.
		var targetSeq int64
		if pull {
			info, err := db.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			targetSeq = info.UpdateSeq
		} else {
			targetSeq = rtest.RemoteUpdateSeq(ctx, t, dbURL)
		}
		if targetSeq > int64(a.Leaves()) {
			t.Errorf("target update_seq %d > %d revisions: a change was applied twice", targetSeq, a.Leaves())
		}
		t.Logf("%d docs, %d leaf revisions, target update_seq %d", len(a), a.Leaves(), targetSeq)
	})
}

var repIDRe = regexp.MustCompile(`"replication_id":"([0-9a-f]+)"`)

// checkAfterKill checks, right after a kill, that no replication log runs
// ahead of what the target holds. It returns the number of logs checked.
func checkAfterKill(ctx context.Context, t *testing.T, path, dbURL, id string, pull bool) int {
	t.Helper()
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatalf("open the store after a kill: %v", err)
	}
	defer db.Close()
	if err := db.CheckInvariants(ctx); err != nil {
		if len(err.Error()) > 2000 {
			err = fmt.Errorf("%.2000s", err.Error())
		}
		t.Fatalf("store broken right after a kill: %v", err)
	}
	remote, err := couch.New(dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := sync.Peer(localpeer.New(db)), sync.Peer(remote)
	if pull {
		src, dst = dst, src
	}
	return rtest.CheckCheckpoints(ctx, t, id, src, dst)
}
