package main

import (
	"context"
	"os"
	"os/signal"
	gosync "sync"
	"syscall"
	"time"
)

// exitTold makes one exit code the truth when signals race the end of a
// command: once the end is told (a --json end event with its exit_code),
// the process exits with that code, and a later Ctrl-C only hurries it.
var exitTold struct {
	gosync.Mutex
	told bool
	code int
}

// tellExit runs tell (which writes the command's end, naming code) and
// records code as the one the process exits with if a signal cuts the
// rest short. A signal handled first exits 130 before tell runs.
func tellExit(code int, tell func()) {
	exitTold.Lock()
	defer exitTold.Unlock()
	tell()
	exitTold.told, exitTold.code = true, code
}

// notifySignals returns a context cancelled by the first SIGINT or
// SIGTERM, which stops the command cleanly (a replication writes its
// checkpoint). A second one leaves at once: with 130, or with the exit
// code the command already told.
func notifySignals() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		code := exitInterrupted
		// Held until the exit, so that nothing tells another code after
		// it; bounded, as the end may be stuck writing to a pipe nobody
		// reads.
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if exitTold.TryLock() {
				if exitTold.told {
					code = exitTold.code
				}
				break
			}
		}
		os.Exit(code)
	}()
	return ctx
}
