package server

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

func TestTLSAndPersistentUUID(t *testing.T) {
	certFile, keyFile, pool := testpeer.SelfSigned(t)
	dir := t.TempDir()
	s, err := New(Config{DataDir: dir, Addr: "127.0.0.1:0", TLSCertFile: certFile, TLSKeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := client.Get("https://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"couchdb":"Welcome"`) {
		t.Fatalf("GET / over TLS: %d %s", res.StatusCode, b)
	}
	// Plain HTTP is not served on the TLS port.
	if res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + l.Addr().String() + "/"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Fatal("plain HTTP answered on the TLS port")
		}
	}
	// The uuid survives a restart over the same directory.
	uuid := s.serverUUID(&http.Request{})
	s2, _ := New(Config{DataDir: dir})
	if got := s2.serverUUID(&http.Request{}); got != uuid || len(uuid) != 32 {
		t.Fatalf("uuid %q after restart, want %q", got, uuid)
	}
}
