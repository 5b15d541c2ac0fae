package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

// TestInterruptResume stops a pull with SIGINT once a checkpoint is written,
// then checks the next run resumes from it rather than from the start.
func TestInterruptResume(t *testing.T) {
	const total = 10000
	pouch := testpeer.PouchDB(t)
	src := pouch.CreateDB(t, "big")
	t0 := time.Now()
	bulkDocs(t, src, "doc", total)
	t.Logf("loaded %d docs into pouchdb-server in %s", total, time.Since(t0).Round(time.Millisecond))
	db := filepath.Join(t.TempDir(), "big.db")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, settee, "pull", "--json", db, src)
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var last, interrupted map[string]any
	signalled := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("--json line %q: %v", sc.Text(), err)
		}
		last = ev
		if ev["kind"] == "interrupted" {
			interrupted = ev
		}
		if !signalled && ev["checkpointed_seq"] != nil && ev["docs_written"].(float64) > 0 {
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			signalled = true
		}
	}
	err = cmd.Wait()
	if !signalled {
		t.Fatalf("the pull ended before a checkpoint was seen (err %v); last event %v", err, last)
	}
	ee, isExit := err.(*exec.ExitError)
	if !isExit || ee.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted pull: %v, stderr %q; want exit %d", err, stderr.String(), exitInterrupted)
	}
	if last["kind"] != "end" || last["exit_code"] != float64(exitInterrupted) {
		t.Errorf("last event of the interrupted pull = %v", last)
	}
	if interrupted == nil || interrupted["last_seq"] == nil {
		t.Fatalf("no \"interrupted\" event with a last_seq; last event %v", last)
	}
	last = interrupted
	if !strings.Contains(stderr.String(), "interrupted; checkpoint at pull seq") {
		t.Errorf("stderr = %q", stderr.String())
	}
	first := last["docs_written"].(float64)
	if first <= 0 || first >= total {
		t.Fatalf("the interrupted pull wrote %v docs; want some but not all", first)
	}
	ckpt, _ := json.Marshal(last["last_seq"])
	t.Logf("interrupted after %v docs written, checkpoint %s", first, ckpt)
	// The replication log on the local side records the same checkpoint.
	var log struct {
		SourceLastSeq json.RawMessage `json:"source_last_seq"`
	}
	mustJSON(t, ok(t, "get", db, "_local/"+last["replication_id"].(string)), &log)
	if string(log.SourceLastSeq) != string(ckpt) {
		t.Errorf("replication log source_last_seq = %s, want %s", log.SourceLastSeq, ckpt)
	}

	evs := events(t, ok(t, "pull", "--json", db, src))
	done := evs[len(evs)-2]
	start, _ := json.Marshal(done["start_seq"])
	if done["kind"] != "done" || string(start) != string(ckpt) {
		t.Fatalf("resumed pull: start_seq %s, want the checkpoint %s (event %v)", start, ckpt, done)
	}
	t.Logf("resumed: %v docs read, %v written, in %.2fs", done["docs_read"], done["docs_written"], done["seconds"])
	if read := done["docs_read"].(float64); read >= total {
		t.Errorf("the resumed pull read %v docs: it started over", read)
	}
	if n := docCount(t, db); n != total {
		t.Errorf("store has %d docs after resuming, want %d", n, total)
	}
}
