package jsfunc

import (
	_ "embed"
	"encoding/json"
	"errors"
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
	// entries are sandbox.js's entry points, looked up once: calling a
	// function by its name would compile the name as a script on every
	// call.
	entries map[string]quickjs.Value
	// validators are the validate_doc_update functions registered in
	// the engine, by source and design document (funcs.go).
	validators  map[string]map[string]validatorReg
	nValidators int
	// maps are the map functions SetMaps set, and the members of the
	// document they use (project.go; nil: the whole document).
	maps *mapSet
	// cut is Map's buffer for the members sent.
	cut []byte
	// filters are the members of doc and req each filter (by source)
	// names, registered in the engine (project.go).
	filters map[string]*[2][]string
	// whole turns off project.go's cut of the arguments (tests compare
	// the two); restarts counts the engines restart replaced.
	whole    bool
	restarts int
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
	r := &Runtime{vm: vm, opts: o, entries: make(map[string]quickjs.Value, len(entryPoints))}
	for _, name := range entryPoints {
		f, err := vm.EvalValue(name, quickjs.EvalGlobal)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("load sandbox: %s: %w", name, err)
		}
		r.entries[name] = f
	}
	if err := vm.SetEvalTimeout(o.Timeout); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// entryPoints are the functions of sandbox.js that call runs.
var entryPoints = []string{"__check", "__setMaps", "__setMapMembers", "__map", "__reduce", "__setValidator", "__resetValidators", "__setMembers", "__validate", "__filterText", "__setFilterMembers", "__resetFilters", "__filter"}

// okTrue is what sandbox.js answers for a call that returned true and
// logged nothing, without encoding it.
const okTrue = `{"ok":true}`

// fullAnswer and freshAnswer are sandbox.js's __validate asking for the
// whole documents (project.go): before the function ran, or after it was
// stopped, in a fresh engine.
const (
	fullAnswer  = `{"full":true}`
	freshAnswer = `{"full":"fresh"}`
)

// errNeedFull and errNeedFresh are those answers as errors.
var (
	errNeedFull  = errors.New("jsfunc: validator needs the whole documents")
	errNeedFresh = errors.New("jsfunc: validator needs the whole documents in a fresh engine")
)

// Close frees the runtime; a nil runtime has nothing to free.
func (r *Runtime) Close() error {
	if r == nil || r.vm == nil {
		return nil
	}
	// The engine must hold no reference of ours when it closes.
	for name, f := range r.entries {
		f.Free()
		delete(r.entries, name)
	}
	err := r.vm.Close()
	r.vm = nil
	return err
}

// restart replaces the engine with a fresh one, the map functions set
// again: a function stopped midway may have left this one changed.
func (r *Runtime) restart() error {
	maps := r.maps
	r.Close()
	fresh, err := New(&r.opts)
	if err != nil {
		r.broken = true
		return err
	}
	r.vm, r.entries, r.broken = fresh.vm, fresh.entries, false
	r.validators, r.nValidators, r.maps, r.filters = nil, 0, nil, nil
	r.restarts++
	if maps != nil {
		return r.SetMaps(maps.sources, maps.lib)
	}
	return nil
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
	f, ok := r.entries[fn]
	if !ok {
		return nil, fmt.Errorf("jsfunc: no entry point %s", fn)
	}
	start := time.Now()
	v, err := f.Call(quickjs.UndefinedValue, args...)
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
	if s == okTrue {
		return json.RawMessage("true"), nil
	}
	switch s {
	case fullAnswer:
		return nil, errNeedFull
	case freshAnswer:
		return nil, errNeedFresh
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
