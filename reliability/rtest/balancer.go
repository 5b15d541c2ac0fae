package rtest

import (
	"io"
	"net"
	"net/url"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"
)

// Balancer is a round-robin TCP load balancer in front of a cluster's
// nodes, as users run one: each new connection goes to the next node, and
// a node refusing connections is skipped. A node that dies drops the
// connections it had (the client sees resets), as behind a real balancer.
type Balancer struct {
	addr     string
	backends []string // host:port
	next     atomic.Uint64
	ln       net.Listener
	mu       gosync.Mutex
	conns    map[net.Conn]bool
	wg       gosync.WaitGroup
	// Conns counts the connections accepted.
	Conns atomic.Int64
}

// NewBalancer starts a balancer on a free loopback port in front of the
// nodes' URLs (their hosts), stopped when the test ends.
func NewBalancer(t testing.TB, nodes []string) *Balancer {
	t.Helper()
	b := &Balancer{conns: map[net.Conn]bool{}}
	for _, n := range nodes {
		u, err := url.Parse(n)
		if err != nil {
			t.Fatal(err)
		}
		b.backends = append(b.backends, u.Host)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.ln, b.addr = ln, ln.Addr().String()
	b.wg.Add(1)
	go b.accept()
	t.Cleanup(b.close)
	return b
}

// URL returns u (a node's URL, credentials and path kept) with the
// balancer's address.
func (b *Balancer) URL(t testing.TB, u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = b.addr
	return pu.String()
}

func (b *Balancer) accept() {
	defer b.wg.Done()
	for {
		c, err := b.ln.Accept()
		if err != nil {
			return
		}
		b.Conns.Add(1)
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.pipe(c)
		}()
	}
}

// dial connects to the next node that accepts, trying each once.
func (b *Balancer) dial() (net.Conn, error) {
	var err error
	for range b.backends {
		i := b.next.Add(1) % uint64(len(b.backends))
		var c net.Conn
		if c, err = net.DialTimeout("tcp", b.backends[i], 2*time.Second); err == nil {
			return c, nil
		}
	}
	return nil, err
}

func (b *Balancer) pipe(c net.Conn) {
	up, err := b.dial()
	if err != nil {
		c.Close()
		return
	}
	if !b.track(c, up) {
		return
	}
	defer b.untrack(c, up)
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close keeps the other direction's answer flowing.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(up, c)
	go cp(c, up)
	<-done
	<-done
}

func (b *Balancer) track(c, up net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns == nil {
		c.Close()
		up.Close()
		return false
	}
	b.conns[c], b.conns[up] = true, true
	return true
}

func (b *Balancer) untrack(c, up net.Conn) {
	b.mu.Lock()
	if b.conns != nil {
		delete(b.conns, c)
		delete(b.conns, up)
	}
	b.mu.Unlock()
	c.Close()
	up.Close()
}

func (b *Balancer) close() {
	b.ln.Close()
	b.mu.Lock()
	for c := range b.conns {
		c.Close()
	}
	b.conns = nil
	b.mu.Unlock()
	b.wg.Wait()
}
