package testpeer

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

func TestPouchDBStartsAndServes(t *testing.T) {
	s := PouchDB(t)
	u := s.CreateDB(t, "smoke")
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"db_name":"smoke"`) {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
}

// TestStartNoticesEarlyExit: a server that dies on start fails at once
// with its output, not after the minute allowed to start.
func TestStartNoticesEarlyExit(t *testing.T) {
	cmd := exec.Command("sh", "-c", "echo cannot bind the port; exit 3")
	_, err := startServer(cmd, fmt.Sprintf("http://127.0.0.1:%d", FreePort(t)))
	if err == nil || !strings.Contains(err.Error(), "exited before answering") || !strings.Contains(err.Error(), "cannot bind the port") {
		t.Fatalf("err = %v", err)
	}
}
