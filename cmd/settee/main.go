package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

func main() {
	ctx := notifySignals()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(report(os.Stderr, err))
}

// command is one subcommand: its name, a one-line summary for the command
// list, and the function that runs it with the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order `settee help` shows them.
func commands() []command {
	return []command{
		{"demo", "serve a hub and sync two devices with it, with a conflict (nothing to install)", runDemo},
		{"pull", "replicate a remote database into a local store", runPull},
		{"push", "replicate a local store to a remote database", runPush},
		{"sync", "replicate both ways between a local store and a remote database", runSync},
		{"fetch-attachment", "download an attachment body a lazy pull left behind (or evict one)", runFetchAttachment},
		{"pending", "list the local changes a push has still to send (offline)", runPending},
		{"serve", "serve local stores over the CouchDB HTTP API", runServe},
		{"replications", "list the replications a running hub keeps by itself (_scheduler/docs)", runReplications},
		{"info", "print a local store's summary, sizes and counts", runInfo},
		{"clone", "make a new local store from a seed store, with its own identity", runClone},
		{"compact", "compact a local store and shrink its file", runCompact},
		{"encrypt", "write an encrypted copy of a local store", runEncrypt},
		{"decrypt", "write a plain copy of an encrypted local store", runDecrypt},
		{"rekey", "encrypt a local store with a new key, in place", runRekey},
		{"purge", "remove a document (or some of its leaves) for good, locally", runPurge},
		{"expire", "set, clear or show when a document expires (local, not replicated)", runExpire},
		{"check", "check a local store's file and invariants; what to do when it is damaged", runCheck},
		{"get", "print a document with its conflicts", runGet},
		{"put", "create or update a document", runPut},
		{"delete", "delete a document (or one conflicting revision)", runDelete},
		{"attachment", "read an attachment's bytes to a file, or store a file as one", runAttachment},
		{"export", "write every document of a local store as NDJSON to stdout", runExport},
		{"import", "write NDJSON documents from stdin into a local store", runImport},
		{"changes", "print a local store's changes feed", runChanges},
		{"conflicts", "list the documents that have conflicts", runConflicts},
		{"find", "query a local store with a Mango selector (CouchDB's _find)", runFind},
		{"index", "create, list or delete Mango json indexes", runIndex},
		{"view", "query a JavaScript map/reduce view of a local store (CouchDB's _view)", runView},
		{"resolve", "resolve a conflict by choosing a winner or writing a merge", runResolve},
		{"version", "print the version", runVersion},
	}
}

// run is the whole program minus the process: it parses args (without the
// program name), runs one subcommand and returns its error, which main turns
// into a one-line message and an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		usage(stdout)
		return nil
	case "-v", "-version", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			return helpOK(c.run(ctx, args[1:], stdout, stderr))
		}
	}
	return usageErrorf("unknown command %q (run \"settee help\" for the list)", name)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `Settee: an offline-first CouchDB-compatible store and replicator.

Usage:
  settee COMMAND [flags] [arguments]

Commands:`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-16s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, `
Run "settee COMMAND --help" for a command's flags and examples.

Try it:
  settee demo --keep /tmp/demo                 # a hub and two devices; keeps their stores
  settee serve --addr 127.0.0.1:5985 /tmp/demo &   # http://127.0.0.1:5985/hub
  settee pull mine.db http://127.0.0.1:5985/hub
  settee get mine.db shopping
A CouchDB with a user: SETTEE_USER=alice SETTEE_PASSWORD=... settee sync notes.db URL

Local stores: pull, sync, put, import and attachment put create a missing
one; every other command refuses a path with no store (exit 5).

`+outputHelp+`

`+exitCodesHelp)
}
