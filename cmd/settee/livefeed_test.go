package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

// TestServeSeesOtherWriters is issue 14's first repro: a live feed of
// `settee serve X.db` sees a write made to X.db by another process (here
// `settee put`), and so does a continuous pull from that server.
func TestServeSeesOtherWriters(t *testing.T) {
	dir := t.TempDir()
	xs := filepath.Join(dir, "xs.db")
	ok(t, "put", xs, "first", `{}`)
	root := serveBinary(t, xs, nil)

	t.Run("Longpoll", func(t *testing.T) {
		type answer struct {
			Results []struct {
				ID string `json:"id"`
			} `json:"results"`
			LastSeq int64 `json:"last_seq"`
		}
		got := make(chan answer, 1)
		go func() {
			var a answer
			defer func() { got <- a }()
			resp, err := http.Get(root + "/xs/_changes?feed=longpoll&since=1&timeout=30000")
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &a); err != nil {
				t.Errorf("%s: %v", b, err)
			}
		}()
		ok(t, "put", xs, "external", `{"by":"cli"}`)
		wrote := time.Now()
		a := <-got
		if len(a.Results) != 1 || a.Results[0].ID != "external" || a.LastSeq != 2 {
			t.Fatalf("longpoll answer %+v, want the external write", a)
		}
		t.Logf("longpoll answered %v after the writer exited", time.Since(wrote))
	})

	t.Run("ContinuousPull", func(t *testing.T) {
		ys := filepath.Join(dir, "ys.db")
		cmd := exec.Command(settee, "pull", "--json", ys, root+"/xs", "--continuous")
		cmd.Env = cleanEnv()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		for start := time.Now(); cli(t, nil, "get", ys, "external").code != 0; {
			if time.Since(start) > 30*time.Second {
				t.Fatal("the continuous pull's first pass did not end in 30 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		ok(t, "put", xs, "external2", `{"by":"cli"}`)
		wrote := time.Now()
		deadline := wrote.Add(30 * time.Second)
		for cli(t, nil, "get", ys, "external2").code != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the continuous pull did not see the external write in 30 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("pulled %v after the writer exited", time.Since(wrote))
	})
}

// TestContinuousOfflineAtOnce: a continuous replication started while the
// server is down says it is offline at the first failure, before the
// replicator's own retries (issue 14, item 7: it showed "starting" for
// 7-8 s).
func TestContinuousOfflineAtOnce(t *testing.T) {
	down := fmt.Sprintf("http://127.0.0.1:%d/x", testpeer.FreePort(t))
	for _, mode := range []string{"--json", "--continuous"} {
		cmd := exec.Command(settee, "sync", "--continuous", mode, filepath.Join(t.TempDir(), "l.db"), down)
		cmd.Env = cleanEnv()
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var first string
		for sc.Scan() {
			if mode == "--json" && !strings.Contains(sc.Text(), `"kind":"state"`) {
				continue
			}
			first = sc.Text()
			break
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if !strings.Contains(first, "offline") {
			t.Errorf("sync %s: first state %q, want offline", mode, first)
		}
	}
}

// TestChangesFollow: `settee changes --follow` prints another process's
// writes as they commit, and Ctrl-C ends it with the last_seq line.
func TestChangesFollow(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	ok(t, "put", db, "first", `{}`)
	cmd := exec.Command(settee, "changes", db, "--follow")
	cmd.Env = cleanEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	next := func() string {
		if !sc.Scan() {
			t.Fatalf("changes --follow ended: %v", sc.Err())
		}
		return sc.Text()
	}
	if l := next(); !strings.Contains(l, `"id":"first"`) {
		t.Fatalf("first row %s", l)
	}
	ok(t, "put", db, "second", `{}`)
	if l := next(); !strings.HasPrefix(l, `{"seq":2,"id":"second","changes":[{"rev":"1-`) {
		t.Fatalf("followed row %s", l)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	if l := next(); l != `{"last_seq":2}` {
		t.Fatalf("after Ctrl-C: %s", l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after Ctrl-C: %v", err)
	}
}
