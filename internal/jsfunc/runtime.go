package jsfunc

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"modernc.org/quickjs"
)

//go:embed sandbox.js
var sandbox string

// Defaults of Options.
const (
	// DefaultTimeout is CouchDB's os_process_timeout.
	DefaultTimeout = 5 * time.Second
	// DefaultMemory caps one runtime's JavaScript heap.
	DefaultMemory = 64 << 20
)

// Options tune a Runtime; the zero value means the defaults.
type Options struct {
	// Timeout bounds one call (a map of one document, one reduce, one
	// validation, one filter batch).
	Timeout time.Duration
	// Memory caps the runtime's JavaScript heap, in bytes.
	Memory uintptr
	// Log receives the lines functions log(); nil drops them.
	Log func(line string)
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	if r.Memory == 0 {
		r.Memory = DefaultMemory
	}
	return r
}

// Runtime is one JavaScript engine with the design-function sandbox. It is
// not safe for concurrent use: take one from a Pool per goroutine.
type Runtime struct {
	vm   *quickjs.VM
	opts Options
	// broken is set when a call failed in a way that leaves the engine's
	// state unknown; the runtime is then closed.
	broken bool
}

// New starts a runtime.
func New(opts *Options) (*Runtime, error) {
	o := opts.withDefaults()
	vm, err := quickjs.NewVM()
	if err != nil {
		return nil, fmt.Errorf("start javascript: %w", err)
	}
	vm.SetMemoryLimit(o.Memory)
	// The sandbox loads before the time limit is set: the limit is the
	// functions', and a slow machine must not fail the runtime's start.
	if _, err := vm.Eval(sandbox, quickjs.EvalGlobal); err != nil {
		vm.Close()
		return nil, fmt.Errorf("load sandbox: %w", err)
	}
	if err := vm.SetEvalTimeout(o.Timeout); err != nil {
		vm.Close()
		return nil, err
	}
	return &Runtime{vm: vm, opts: o}, nil
}

// Close frees the runtime.
func (r *Runtime) Close() error {
	if r.vm == nil {
		return nil
	}
	err := r.vm.Close()
	r.vm = nil
	return err
}

// Usable reports whether the runtime can take more calls.
func (r *Runtime) Usable() bool { return r.vm != nil && !r.broken }

// call runs one entry point of sandbox.js and decodes its answer: the
// thrown value becomes an error, an engine failure (timeout, memory)
// closes the runtime.
func (r *Runtime) call(fn string, args ...any) (json.RawMessage, error) {
	if !r.Usable() {
		return nil, ErrClosed
	}
	start := time.Now()
	v, err := r.vm.Call(fn, args...)
	if err != nil {
		r.broken = true
		r.Close()
		// The sandbox catches everything a function throws: what reaches
		// here is the engine giving up, interrupted at the time limit or
		// out of memory.
		if time.Since(start) >= r.opts.Timeout {
			return nil, ErrTimeout
		}
		return nil, fmt.Errorf("%w (%v)", ErrMemory, err)
	}
	s, ok := v.(string)
	if !ok {
		r.broken = true
		r.Close()
		return nil, ErrMemory
	}
	var t thrown
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return nil, fmt.Errorf("decode %s answer: %w", fn, err)
	}
	if r.opts.Log != nil {
		for _, l := range t.Log {
			r.opts.Log(l)
		}
	}
	if t.Error != "" {
		return nil, t.err()
	}
	return t.OK, nil
}
