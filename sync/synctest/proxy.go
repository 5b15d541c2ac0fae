package synctest

import (
	"io"
	"net"
	"net/url"
	gosync "sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy in front of a remote that can be cut (listener
// closed, open connections dropped) and restored on the same port, to play
// a network that comes and goes.
type Proxy struct {
	t      testing.TB
	addr   string // where it listens
	target string // host:port it forwards to
	mu     gosync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

// NewProxy starts a proxy to target (host:port) on a free loopback port.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{t: t, target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.Down)
	return p
}

// URL returns u with its host replaced by the proxy's.
func (p *Proxy) URL(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		p.t.Fatal(err)
	}
	pu.Host = p.addr
	return pu.String()
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *Proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() { io.Copy(c, s); done <- struct{}{} }()
	<-done
	c.Close()
	s.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// Down closes the listener and drops every open connection.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Up listens again on the same address.
func (p *Proxy) Up() {
	p.t.Helper()
	p.serve(Relisten(p.t, p.addr))
}

// Relisten listens on addr again, a loopback address a server that went
// down listened on (the port may take a moment to be free again).
func Relisten(t testing.TB, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("listen again on %s: %v", addr, err)
	return nil
}
