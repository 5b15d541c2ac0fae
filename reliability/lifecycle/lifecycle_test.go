// Package lifecycle kills a process that purges, expires and compacts a
// store with SIGKILL at random moments, again and again, and checks after
// every kill that the store opens, passes its invariants and PRAGMA
// integrity_check, and lost nothing it was not asked to remove.
package lifecycle

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/reliability/rtest"
)

// childEnv names the store a child process works on.
const childEnv = "SETTEE_LIFECYCLE_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		if err := child(path); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	fmt.Println("reliability/lifecycle:", rtest.Count.Report())
	os.Exit(code)
}

const (
	docsPerKind = 1500
	kills       = 16
)

// child purges "p" documents in batches, sets past expirations on "e"
// documents, writes new "n" documents and compacts, until killed.
func child(path string) error {
	ctx := context.Background()
	db, err := localdb.Open(path, nil)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for round := 0; ; round++ {
		req := map[string][]string{}
		for range 50 {
			id := fmt.Sprintf("p%05d", rng.Intn(docsPerKind))
			d, err := db.Get(ctx, id, localdb.GetOptions{})
			if err != nil {
				continue
			}
			req[id] = []string{d.Rev}
		}
		if _, err := db.Purge(ctx, req); err != nil {
			return err
		}
		for range 20 {
			id := fmt.Sprintf("e%05d", rng.Intn(docsPerKind))
			if err := db.SetExpiration(ctx, id, time.Now().Add(-time.Second)); err != nil && !errors.Is(err, couchdoc.ErrNotFound) {
				return err
			}
		}
		var docs []*couchdoc.Doc
		for i := range 100 {
			docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("n%d-%d-%d", os.Getpid(), round, i), Body: []byte(`{"pad":"` + pad + `"}`)})
		}
		if _, err := db.BulkDocs(ctx, docs, true); err != nil {
			return err
		}
		if round%3 == 0 {
			if err := db.Compact(ctx); err != nil {
				return err
			}
		}
		fmt.Println(roundDone) // the parent kills only a child at work
	}
}

// roundDone is the line a child prints after each round.
const roundDone = "round done"

var pad = fmt.Sprintf("%0500d", 0)

// build writes the starting store: "k" (kept), "p" (to purge) and "e" (to
// expire) documents, each with two revisions so Compact has bodies to drop.
func build(t *testing.T, path string) map[string]string {
	ctx := context.Background()
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	keep := map[string]string{}
	for _, kind := range []string{"k", "p", "e"} {
		var docs []*couchdoc.Doc
		for i := range docsPerKind {
			docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("%s%05d", kind, i), Body: []byte(`{"v":1,"pad":"` + pad + `"}`)})
		}
		res, err := db.BulkDocs(ctx, docs, true)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			docs[i].Rev = r.Rev
			docs[i].Body = []byte(`{"v":2,"kind":"` + kind + `"}`)
		}
		res, err = db.BulkDocs(ctx, docs, true)
		if err != nil {
			t.Fatal(err)
		}
		if kind == "k" {
			for _, r := range res {
				keep[r.ID] = r.Rev
			}
		}
	}
	return keep
}

func TestKillDuringPurgeExpiryCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	keep := build(t, path)
	sd := time.Now().UnixNano() % 1e9
	if s := os.Getenv("SETTEE_SEED"); s != "" {
		sd, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (replay with SETTEE_SEED=%d)", sd, sd)
	rng := rand.New(rand.NewSource(sd))
	for k := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		out, err := os.CreateTemp(t.TempDir(), "child")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = out
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// On a loaded machine a child may not get past opening the store
		// within a fixed delay: wait (bounded) for its first round, then
		// kill it somewhere in the rounds that follow.
		worked := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			first := true
			for sc.Scan() {
				if first && sc.Text() == roundDone {
					close(worked)
					first = false
				}
			}
		}()
		select {
		case <-worked:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("kill %d: the child did not finish a round in 2 minutes:\n%s", k, b)
		}
		time.Sleep(time.Duration(rng.Intn(900)) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("kill %d: the child ended by itself (%v):\n%s", k, err, b)
		}
		check(t, path, keep)
		rtest.Count.Crashes.Add(1)
	}
	// The kills landed on a child that was doing the work.
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	info, _ := db.Info(context.Background())
	gone := map[string]int{}
	for _, kind := range []string{"p", "e"} {
		for i := range docsPerKind {
			if _, err := db.Get(context.Background(), fmt.Sprintf("%s%05d", kind, i), localdb.GetOptions{}); errors.Is(err, couchdoc.ErrNotFound) {
				gone[kind]++
			}
		}
	}
	t.Logf("after %d kills: purge_seq %d, %d docs, %v purged, %+v", kills, info.PurgeSeq, info.DocCount, gone, st.Sizes)
	if info.PurgeSeq < 100 || gone["p"] == 0 || gone["e"] == 0 {
		t.Errorf("the children did little: purge_seq %d, purged %v", info.PurgeSeq, gone)
	}
}

// check opens the store after a kill: it must open (purging what expired),
// pass its invariants and SQLite's integrity check, keep every "k" document
// as written, and hold no expired "e" document.
func check(t *testing.T, path string, keep map[string]string) {
	t.Helper()
	ctx := context.Background()
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatalf("open after a kill: %v", err)
	}
	defer db.Close()
	if err := db.CheckInvariants(ctx); err != nil {
		t.Fatalf("invariants after a kill: %.2000v", err)
	}
	for id, rev := range keep {
		d, err := db.Get(ctx, id, localdb.GetOptions{})
		if err != nil || d.Rev != rev {
			rtest.Count.Lost.Add(1)
			t.Fatalf("kept doc %s after a kill: %v %v", id, d, err)
		}
	}
	for i := range docsPerKind {
		id := fmt.Sprintf("e%05d", i)
		if at, err := db.Expiration(ctx, id); err != nil || (!at.IsZero() && at.Before(time.Now())) {
			t.Fatalf("%s expired at %v but is still there (%v)", id, at, err)
		}
	}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var res string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check after a kill: %q %v", res, err)
	}
}
