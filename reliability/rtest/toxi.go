package rtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	gosync "sync"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Toxi is a Toxiproxy TCP proxy run in process in front of one upstream.
type Toxi struct {
	// URL is the upstream URL with the proxy's host:port.
	URL   string
	proxy *toxiproxy.Proxy
	mu    gosync.Mutex
	names []string
	seq   int
}

var toxiServer = gosync.OnceValue(func() *toxiproxy.ApiServer {
	return toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
})

// NewToxi starts a proxy on a free loopback port in front of upstream (an
// http URL; its path is kept in URL). It stops when the test ends.
func NewToxi(t testing.TB, upstream string) *Toxi {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	srv := toxiServer()
	p := toxiproxy.NewProxy(srv, fmt.Sprintf("%s-%p", t.Name(), t), "127.0.0.1:0", u.Host)
	if err := p.Start(); err != nil {
		t.Fatalf("toxiproxy: %v", err)
	}
	t.Cleanup(p.Stop)
	pu := *u
	pu.Host = p.Listen
	return &Toxi{URL: strings.TrimSuffix(pu.String(), "/"), proxy: p}
}

// Add installs a toxic (a Toxiproxy type such as "latency", "bandwidth",
// "reset_peer", "timeout", "limit_data", "slicer") on a stream
// ("downstream": server to client, or "upstream") for a share of the
// connections (toxicity, 0..1). It counts one fault configuration.
func (x *Toxi) Add(t testing.TB, typ, stream string, toxicity float64, attrs map[string]any) {
	t.Helper()
	x.mu.Lock()
	x.seq++
	name := fmt.Sprintf("%s_%s_%d", typ, stream, x.seq)
	x.names = append(x.names, name)
	x.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"name": name, "type": typ, "stream": stream, "toxicity": toxicity, "attributes": attrs})
	if _, err := x.proxy.Toxics.AddToxicJson(strings.NewReader(string(body))); err != nil {
		t.Fatalf("toxiproxy: add %s: %v", typ, err)
	}
	Count.Faults.Add(1)
}

// Clear removes every toxic; connections made afterwards are clean.
func (x *Toxi) Clear(t testing.TB) {
	t.Helper()
	x.mu.Lock()
	names := x.names
	x.names = nil
	x.mu.Unlock()
	for _, n := range names {
		if err := x.proxy.Toxics.RemoveToxic(context.Background(), n); err != nil {
			t.Fatalf("toxiproxy: remove %s: %v", n, err)
		}
	}
}
