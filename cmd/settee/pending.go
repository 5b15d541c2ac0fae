package main

import (
	"context"
	"fmt"
	"io"

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
--continuous): they are part of its checkpoint's id. --json prints a JSON
object with the count and the ids.`,
	examples: `  settee pending notes.db https://couch.example.com/notes
  settee pending notes.db https://couch.example.com/notes --json`,
	exits: true,
}

func runPending(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f replFlags
	fs := flagSet("pending")
	f.registerOn(fs)
	pos, err := parseFlags(fs, pendingHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	opts.Filter, opts.QueryParams, opts.Since, opts.CreateTarget = "", nil, nil, false
	rem, err := newRemote(pos[1], &f.remote, stderr)
	if err != nil {
		return err
	}
	remotePeer, err := newRemotePeer(rem)
	if err != nil {
		return err
	}
	return withStore(pos[0], false, func(db *localdb.DB) error {
		opts.Source, opts.Target = newLocalPeer(db), remotePeer
		rep, err := sync.New(opts)
		if err != nil {
			return err
		}
		ids, err := rep.PendingDocIDs(ctx)
		if err != nil {
			return err
		}
		if f.jsonOut {
			if ids == nil {
				ids = []string{}
			}
			return writeLine(stdout, struct {
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
