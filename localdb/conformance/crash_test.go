package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"modernc.org/sqlite" // database/sql driver "sqlite", for the read-only integrity check
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

// TestCrashRecovery kills a writing child process with SIGKILL at random
// moments, many times, and checks the database after each kill.
func TestCrashRecovery(t *testing.T) {
	kills := int(envOrFlag(0, crashKillsEnv))
	if kills == 0 {
		kills = 24
		if testing.Short() {
			kills = 6
		}
	}
	seed := time.Now().UnixNano()
	if s := envOrFlag(*seedFlag, "SETTEE_CONFORMANCE_SEED"); s != 0 {
		seed = s
	}
	rng := rand.New(rand.NewSource(seed))
	path := filepath.Join(t.TempDir(), "crash.db")
	committed := 0 // batches 1..committed are in the database
	maxAcked := 0  // the last batch a child acknowledged
	lastProgress := 0
	killedEarly := 0
	for i := 0; i < kills; i++ {
		// A quarter of the kills land at a random moment from the start
		// (during Open, recovery, the first batch); the rest after the
		// child has acknowledged a batch.
		early := i == 0 || rng.Intn(4) == 0
		delay := time.Duration(rng.Intn(150)) * time.Millisecond
		if early {
			delay = time.Duration(rng.Intn(20_000)) * time.Microsecond
		}
		acked, err := runAndKill(t, path, committed+1, early, delay)
		if err != nil {
			t.Fatalf("seed %d, kill %d: %v", seed, i, err)
		}
		got, progress, err := verifyCrashDB(t, path)
		if err != nil {
			t.Fatalf("seed %d, kill %d (after batch %d was acknowledged): %v", seed, i, acked, err)
		}
		if acked > committed {
			maxAcked = acked // a batch of this run was acknowledged
		}
		// The checkpoint never goes back, covers every acknowledged
		// batch, and names no batch that is not there. (It may lag by more
		// than one batch: a child killed between a batch and its
		// checkpoint leaves it behind, and the next child starts after.)
		if progress < maxAcked || progress < lastProgress || progress > got {
			t.Fatalf("seed %d, kill %d: %s says batch %d (before: %d); batch %d was acknowledged and batches 1..%d are there", seed, i, progressID, progress, lastProgress, maxAcked, got)
		}
		lastProgress = progress
		if got != acked && got != acked+1 {
			t.Fatalf("seed %d, kill %d: batches 1..%d are in the database; %d were there before and batch %d was acknowledged", seed, i, got, committed, acked)
		}
		if early && acked <= committed {
			killedEarly++
		}
		committed = got
	}
	t.Logf("seed %d: %d kills (%d before any acknowledgment), %d batches committed", seed, kills, killedEarly, committed)
	if committed == 0 {
		t.Fatalf("no batch was ever committed")
	}
}

// runAndKill starts a child writing from batch start, kills it, and returns
// the last batch it acknowledged (start-1 when none: batches before start
// are known to be there).
func runAndKill(t *testing.T, path string, start int, early bool, delay time.Duration) (int, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path, crashStartEnv+"="+strconv.Itoa(start))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	lines := make(chan int, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if n, err := strconv.Atoi(sc.Text()); err == nil {
				lines <- n
			}
		}
	}()
	acked := start - 1
	if !early {
		select {
		case n, ok := <-lines:
			if ok {
				acked = n
			}
		case <-time.After(60 * time.Second):
		}
		if acked < start {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, fmt.Errorf("child acknowledged no batch within 60s; stderr: %s", stderr.String())
		}
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return 0, err
	}
	for n := range lines {
		acked = n
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		return 0, fmt.Errorf("child ended by itself (%v) before the kill; stderr: %s", err, stderr.String())
	}
	return acked, nil
}

// verifyCrashDB checks a database after a kill and returns how many batches
// it holds and the batch _local/progress names: the file passes PRAGMA integrity_check (read-only, before
// anything else opens it), localdb opens it and CheckInvariants passes, and
// the batches in it are exactly 1..n, each whole.
func verifyCrashDB(t *testing.T, path string) (batches, progress int, err error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil // killed before Open created the file
	}
	n, err := verifyBatches(path)
	if err != nil {
		return 0, 0, err
	}
	db, err := localdb.Open(path, localdbtest.Options(nil))
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	d, err := db.GetLocal(context.Background(), progressID)
	if errors.Is(err, couchdoc.ErrNotFound) {
		return n, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", progressID, err)
	}
	var b struct{ Batch int }
	if err := json.Unmarshal(d.Body, &b); err != nil {
		return 0, 0, fmt.Errorf("%s: %s: %w", progressID, d.Body, err)
	}
	return n, b.Batch, nil
}

// verifyBatches does the checks of verifyCrashDB on the batches.
func verifyBatches(path string) (int, error) {
	if err := integrityCheck(path); err != nil {
		// A kill while the first Open was creating the file can leave a
		// hot rollback journal (the file is not in WAL mode yet), which a
		// read-only connection may not roll back (SQLITE_READONLY_ROLLBACK).
		// The writer's first open recovers it; then check again.
		var se *sqlite.Error
		if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_READONLY {
			return 0, err
		}
		db, oerr := localdb.Open(path, localdbtest.Options(nil))
		if oerr != nil {
			return 0, fmt.Errorf("open after the kill (%v): %w", err, oerr)
		}
		if cerr := db.Close(); cerr != nil {
			return 0, cerr
		}
		if err := integrityCheck(path); err != nil {
			return 0, fmt.Errorf("after recovery: %w", err)
		}
	}
	ctx := context.Background()
	db, err := localdb.Open(path, localdbtest.Options(nil))
	if err != nil {
		return 0, fmt.Errorf("open after the kill: %w", err)
	}
	defer db.Close()
	if err := db.CheckInvariants(ctx); err != nil {
		return 0, fmt.Errorf("CheckInvariants after the kill: %w", err)
	}
	deleted := map[string]bool{}
	if _, err := db.Changes(ctx, localdb.ChangesOptions{}, func(c *localdb.Change) error {
		deleted[c.ID] = c.Deleted
		return nil
	}); err != nil {
		return 0, fmt.Errorf("changes: %w", err)
	}
	perBatch := map[int]int{}
	n := 0
	for id := range deleted {
		if strings.HasPrefix(id, "c") || strings.HasPrefix(id, "_design/") {
			continue
		}
		k, err := strconv.Atoi(id[1:7])
		if err != nil || id[0] != 'b' {
			return 0, fmt.Errorf("unexpected doc %q", id)
		}
		perBatch[k]++
		n = max(n, k)
	}
	// The child creates its two indexes before its first batch.
	if n > 0 && len(db.Indexes()) != 2 {
		return 0, fmt.Errorf("%d indexes after batch %d, want 2", len(db.Indexes()), n)
	}
	for k := 1; k <= n; k++ {
		if perBatch[k] != batchSize(k) {
			return 0, fmt.Errorf("batch %d has %d of its %d docs (batches 1..%d are there)", k, perBatch[k], batchSize(k), n)
		}
		// The first doc of batch k is deleted exactly when batch k+1 is a
		// new_edits=true batch that is there.
		first := batchDocID(k, 0)
		if want := k < n && !batchReplicated(k+1); deleted[first] != want {
			return 0, fmt.Errorf("doc %s deleted=%v, want %v (batches 1..%d are there)", first, deleted[first], want, n)
		}
	}
	// Bodies and revs of the last batches, and the counters.
	for k := max(1, n-3); k <= n; k++ {
		for j := 0; j < batchSize(k); j++ {
			id := batchDocID(k, j)
			if j == 0 && k < n && !batchReplicated(k+1) {
				continue // deleted, checked above
			}
			d, err := db.Get(ctx, id, localdb.GetOptions{})
			if err != nil {
				return 0, fmt.Errorf("get %s: %w", id, err)
			}
			var b struct{ Batch, J int }
			if err := json.Unmarshal(d.Body, &b); err != nil || b.Batch != k || b.J != j {
				return 0, fmt.Errorf("doc %s has body %s", id, d.Body)
			}
			if want, _ := replicatedRev(id); batchReplicated(k) && d.Rev != want {
				return 0, fmt.Errorf("doc %s has rev %s, want %s", id, d.Rev, want)
			}
			if j == 1 {
				if err := checkAtt(ctx, db, id, "att", attData(id, k)); err != nil {
					return 0, err
				}
			}
		}
	}
	for r := 0; r < 4; r++ {
		want := 0
		for k := n; k >= 1; k-- {
			if k%4 == r && !batchReplicated(k) {
				want = k
				break
			}
		}
		d, err := db.Get(ctx, counterID(r), localdb.GetOptions{})
		if want == 0 {
			if !errors.Is(err, couchdoc.ErrNotFound) {
				return 0, fmt.Errorf("counter %s: %v, %v; want none (batches 1..%d)", counterID(r), d, err, n)
			}
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("counter %s: %w", counterID(r), err)
		}
		var b struct{ Batch int }
		if err := json.Unmarshal(d.Body, &b); err != nil || b.Batch != want {
			return 0, fmt.Errorf("counter %s is %s, want batch %d (batches 1..%d)", counterID(r), d.Body, want, n)
		}
		if err := checkAtt(ctx, db, counterID(r), "c.bin", attData(counterID(r), want)); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// integrityCheck runs PRAGMA integrity_check on a read-only connection;
// on an encrypted store (SETTEE_TEST_ENCRYPT=1), through the store, whose
// writer first recovers the file.
func integrityCheck(path string) error {
	if key := localdbtest.Key(); key != nil {
		db, err := localdb.Open(path, &localdb.Options{Key: key, NoCreate: true})
		if errors.Is(err, localdb.ErrNoStore) {
			return nil // killed before the store was made: an empty file
		}
		if err != nil {
			return err
		}
		defer db.Close()
		res, err := db.IntegrityCheck(context.Background())
		if err == nil && (len(res) != 1 || res[0] != "ok") {
			err = fmt.Errorf("integrity_check: %v", res)
		}
		return err
	}
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer conn.Close()
	rows, err := conn.Query("PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("integrity_check: %w", err)
	}
	defer rows.Close()
	var res []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		res = append(res, s)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("integrity_check: %w", err)
	}
	if len(res) != 1 || res[0] != "ok" {
		return fmt.Errorf("integrity_check: %v", res)
	}
	return nil
}

// checkAtt reads an attachment of a document's winner and compares it.
func checkAtt(ctx context.Context, db *localdb.DB, id, name string, want []byte) error {
	_, rc, err := db.OpenAttachment(ctx, id, "", name)
	if err != nil {
		return fmt.Errorf("attachment %s/%s: %w", id, name, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("attachment %s/%s: %w", id, name, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("attachment %s/%s has %d bytes, want %d", id, name, len(got), len(want))
	}
	return nil
}
