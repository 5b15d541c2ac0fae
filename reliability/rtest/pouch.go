package rtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/testutil"
)

// Pouch is a pouchdb-server in memory on a fixed loopback port that can be
// restarted there, losing its data (as a crashed in-memory server does).
type Pouch struct {
	URL  string
	port int
	dir  string
	cmd  *exec.Cmd
	out  *testutil.SyncBuffer
}

// StartPouch starts a pouchdb-server; it is killed when the test ends.
func StartPouch(t testing.TB) *Pouch {
	t.Helper()
	p := &Pouch{port: testpeer.FreePort(t), dir: t.TempDir()}
	p.URL = fmt.Sprintf("http://127.0.0.1:%d", p.port)
	p.start(t)
	t.Cleanup(p.kill)
	return p
}

func (p *Pouch) start(t testing.TB) {
	t.Helper()
	bin := testpeer.NodeBin(t, "pouchdb-server")
	for attempt := 0; attempt < 50; attempt++ {
		p.out = &testutil.SyncBuffer{}
		p.cmd = testpeer.PouchDBCommand(t, bin, p.port)
		p.cmd.Dir = p.dir
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func(c *exec.Cmd) { c.Wait(); close(exited) }(p.cmd)
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+"/", nil)
			resp, err := http.DefaultClient.Do(req)
			cancel()
			if err == nil {
				welcome, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
				resp.Body.Close()
				// Another server may have taken the port: only ours counts.
				if resp.StatusCode == 200 && testpeer.OwnsPouchDB(p.dir, welcome) {
					return
				}
			}
			select {
			case <-exited:
				deadline = time.Time{} // port still busy: try again
			case <-time.After(100 * time.Millisecond):
			}
		}
		p.kill()
	}
	t.Fatalf("pouchdb-server did not start on port %d: %s", p.port, p.out)
}

func (p *Pouch) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	time.Sleep(50 * time.Millisecond)
	p.cmd = nil
}

// Restart kills the server and starts a fresh one on the same port: every
// database is gone.
func (p *Pouch) Restart(t testing.TB) {
	t.Helper()
	p.kill()
	p.start(t)
}

// CreateDB creates a database and returns its URL.
func (p *Pouch) CreateDB(t testing.TB, name string) string {
	t.Helper()
	u := p.URL + "/" + name
	if st := testutil.DoJSON(context.Background(), t, http.MethodPut, u, nil, nil); st != 201 && st != 200 {
		t.Fatalf("create %s: status %d", name, st)
	}
	return u
}

// Output returns the tail of the server's output (for failure messages).
func (p *Pouch) Output() string {
	if p.out == nil {
		return ""
	}
	s := p.out.String()
	if len(s) > 3000 {
		s = s[len(s)-3000:]
	}
	return s
}
