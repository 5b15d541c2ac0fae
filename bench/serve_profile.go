package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The harness profiles the settee serve child only while one of our
// replication children runs (with -cpuprofile-dir), so a server profile
// sits next to each client profile (pull.pprof, server-pull.pprof): the
// pull is bound by both processes' CPU together. The child and the harness
// talk through a control file and SIGUSR1: the harness writes the profile's
// path (empty: stop) into the file and signals; the child acts and removes
// the file, which tells the harness it is done.

// serveProfileControl is the control file's name in -cpuprofile-dir.
const serveProfileControl = ".serve-profile"

// watchProfileControl serves the control file's requests until the
// process ends.
func watchProfileControl(control string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		stop := func() {}
		for range sig {
			data, err := os.ReadFile(control)
			if err != nil {
				continue
			}
			stop()
			stop = func() {}
			if path := strings.TrimSpace(string(data)); path != "" {
				if s, err := startCPUProfile(path); err == nil {
					stop = s
				} else {
					fmt.Fprintf(os.Stderr, "serve: cpu profile: %v\n", err)
				}
			}
			os.Remove(control)
		}
	}()
}

// profileServer starts (path != "") or stops (path == "") the settee
// serve child's CPU profile, once the run started it with a control file.
func (b *bench) profileServer(path string) error {
	if b.srv == nil || b.srv.profileControl == "" {
		return nil
	}
	control := b.srv.profileControl
	if err := os.WriteFile(control, []byte(path), 0o644); err != nil {
		return err
	}
	if err := b.srv.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(control); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	return fmt.Errorf("server profile %q: the server did not answer", filepath.Base(path))
}
