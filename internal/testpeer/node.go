package testpeer

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// NodeScript runs the node script testdata/<script> of the repository (as
// "server/pouchdb-auth.js") with args and the repository's npm packages,
// bounded by within, and returns what it printed. A missing node or npm
// package, a failure or a timeout fails the test with the script's
// standard error.
func NodeScript(t testing.TB, within time.Duration, script string, args ...string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	root := RepoRoot(t)
	for _, pkg := range []string{"pouchdb-node", "pouchdb-adapter-memory"} {
		if _, err := os.Stat(filepath.Join(root, "node_modules", pkg)); err != nil {
			t.Fatalf("npm package %s is missing (run `npm ci` at the repository root): %v", pkg, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(root, "testdata", filepath.FromSlash(script))}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(root, "node_modules"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstderr:\n%s", script, err, stderr.String())
	}
	return stdout.Bytes()
}
