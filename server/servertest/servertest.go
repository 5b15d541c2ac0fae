// Package servertest starts Settee's CouchDB server for tests of other
// packages: on a free loopback port, over a temporary data directory,
// stopped (and its databases' invariants checked) when the test ends.
package servertest

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/settee/settee/server"
)

// Instance is a running server.
type Instance struct {
	// URL is the server's root, such as http://127.0.0.1:41234 (no
	// credentials in it, even when users are configured).
	URL string
	// Dir is the data directory.
	Dir string
	// Server is the handler, for direct calls.
	Server *server.Server
}

// Start starts a server. cfg may be nil; its DataDir and Addr are
// overridden (a temp dir, 127.0.0.1:0). The server stops at the end of the
// test, which fails if a database breaks an invariant.
func Start(t testing.TB, cfg *server.Config) *Instance {
	t.Helper()
	var c server.Config
	if cfg != nil {
		c = *cfg
	}
	c.DataDir = t.TempDir()
	c.DBPath = ""
	c.Addr = "127.0.0.1:0"
	s, err := server.New(c)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	l, err := s.Listen()
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	scheme := "http://"
	if c.TLSCertFile != "" {
		scheme = "https://"
	}
	inst := &Instance{URL: scheme + l.Addr().String(), Dir: c.DataDir, Server: s}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("servertest: serve: %v", err)
		}
		if err := s.CheckInvariants(context.Background()); err != nil {
			t.Errorf("servertest: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("servertest: close: %v", err)
		}
	})
	return inst
}

// CreateDB creates a database and returns its URL. With users configured,
// pass the name and password to authenticate with: CreateDB(t, "db", "ann", "pw").
func (i *Instance) CreateDB(t testing.TB, name string, user ...string) string {
	t.Helper()
	u := i.URL + "/" + name
	req, _ := http.NewRequest(http.MethodPut, u, nil)
	if len(user) == 2 {
		req.SetBasicAuth(user[0], user[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("servertest: create %s: %v", name, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("servertest: create %s: status %d", name, resp.StatusCode)
	}
	return strings.TrimSuffix(u, "/")
}
