package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/internal/testpeer"
)

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := testpeer.SelfSigned(t)
	store := filepath.Join(dir, "tls.db")
	ok(t, "put", store, "a", `{}`)
	root := serveBinary(t, store, nil, "--tls-cert", cert, "--tls-key", key)
	dbURL := strings.Replace(root, "http://", "https://", 1) + "/tls"

	r := cli(t, nil, "pull", "--retries", "0", filepath.Join(dir, "x.db"), dbURL)
	// No retry makes the certificate trusted: the fix is an argument (2).
	failsWith(t, r, exitUsage, "cannot reach "+dbURL, "unknown authority", "--ca-file")

	// Plain HTTP to the HTTPS server: the URL is wrong (2), and the fix said.
	plain := root + "/tls"
	r = cli(t, nil, "pull", "--retries", "0", filepath.Join(dir, "x.db"), plain)
	failsWith(t, r, exitUsage, "the server speaks HTTPS, not HTTP: use "+dbURL)

	pulled := filepath.Join(dir, "ca.db")
	ok(t, "pull", "--ca-file", cert, pulled, dbURL)
	if n := docCount(t, pulled); n != 1 {
		t.Errorf("pull --ca-file: %d docs", n)
	}
	r = cli(t, nil, "pull", "--insecure", filepath.Join(dir, "insecure.db"), dbURL)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: --insecure") {
		t.Errorf("pull --insecure: exit %d, stderr %q", r.code, r.stderr)
	}
}
