package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
)

var pendingHelp = cmdHelp{
	usage: "settee pending [flags] LOCAL.db URL",
	about: `List, one id per line, the documents of a local store that a push (or
the push of a sync) to URL has still to send: those changed after the
last checkpoint of that replication. Only the local store is read (the
checkpoint is kept there too), so it answers offline; the remote is not
contacted. Give the filters the replication uses (--doc-ids, --selector,
--continuous): they are part of its checkpoint's id (--create-target is
not, so a push with it and one without share their checkpoint). --json
(or --pretty) prints a JSON object with the count and the ids instead.`,
	examples: `  settee pending notes.db https://couch.example.com/notes
  settee pending notes.db https://couch.example.com/notes --json`,
	exits:     storeExits,
	ownOutput: true,
}

func runPending(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f replFlags
	fs := flagSet("pending")
	ks := keyFlag(fs)
	fs.BoolVar(&f.continuous, "continuous", false, "the push is continuous (part of its checkpoint's id)")
	fs.Func("doc-ids", "the push replicates only these comma-separated `ids`", func(v string) error {
		f.docIDs, f.docIDsSet = v, true
		return nil
	})
	fs.StringVar(&f.selector, "selector", "", "the push replicates only the documents matching this Mango selector (`JSON`)")
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, pendingHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	f.attachments = "eager"
	opts, err := f.options()
	if err != nil {
		return err
	}
	// The remote is only named (its URL without credentials is part of the
	// replication id): no request is made, so no credentials are needed.
	u, err := parseDBURL(pos[1])
	if err != nil {
		return err
	}
	u.User = nil
	remotePeer, err := newRemotePeer(&remote{URL: u, flags: remoteFlags{timeout: time.Second}})
	if err != nil {
		return err
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		opts.Source, opts.Target = newLocalPeer(db), remotePeer
		rep, err := sync.New(opts)
		if err != nil {
			return err
		}
		ids, err := rep.PendingDocIDs(ctx)
		if err != nil {
			return err
		}
		if out.json || out.pretty {
			if ids == nil {
				ids = []string{}
			}
			return out.value(struct {
				Pending int      `json:"pending"`
				IDs     []string `json:"ids"`
			}{len(ids), ids})
		}
		for _, id := range ids {
			if _, err := fmt.Fprintln(stdout, id); err != nil {
				return err
			}
		}
		return nil
	})
}
