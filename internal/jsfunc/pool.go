package jsfunc

import (
	gosync "sync"
)

// Pool keeps idle runtimes for reuse. Get starts one when none is idle;
// Put keeps at most Size of them and closes the rest, and drops runtimes
// that failed.
type Pool struct {
	opts Options
	size int
	mu   gosync.Mutex
	idle []*Runtime
}

// NewPool returns a pool of runtimes made with opts, keeping up to size idle.
func NewPool(opts *Options, size int) *Pool {
	if size < 1 {
		size = 1
	}
	return &Pool{opts: opts.withDefaults(), size: size}
}

// Get returns an idle runtime or a new one.
func (p *Pool) Get() (*Runtime, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return r, nil
	}
	p.mu.Unlock()
	return New(&p.opts)
}

// Put gives a runtime back.
func (p *Pool) Put(r *Runtime) {
	if r == nil || !r.Usable() {
		return
	}
	p.mu.Lock()
	if len(p.idle) < p.size {
		p.idle = append(p.idle, r)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	r.Close()
}

// Close closes the idle runtimes.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, r := range idle {
		r.Close()
	}
}

// Pools keeps one Pool per design document.
type Pools struct {
	opts  Options
	size  int
	mu    gosync.Mutex
	pools map[string]*Pool
}

// NewPools returns per-design-document pools of runtimes made with opts.
func NewPools(opts *Options, size int) *Pools {
	return &Pools{opts: opts.withDefaults(), size: size, pools: map[string]*Pool{}}
}

// For returns the pool of design document id.
func (ps *Pools) For(id string) *Pool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p := ps.pools[id]
	if p == nil {
		p = NewPool(&ps.opts, ps.size)
		ps.pools[id] = p
	}
	return p
}

// Close closes every pool's idle runtimes.
func (ps *Pools) Close() {
	ps.mu.Lock()
	pools := ps.pools
	ps.pools = map[string]*Pool{}
	ps.mu.Unlock()
	for _, p := range pools {
		p.Close()
	}
}
