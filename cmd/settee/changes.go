package main

import (
	"context"
	"io"

	"github.com/settee/settee/localdb"
)

var changesHelp = cmdHelp{
	usage: "settee changes [flags] LOCAL.db",
	about: `Print a local store's changes feed, one JSON row after another as
CouchDB's continuous feed does (one line each when piped), then
{"last_seq":N}. With --follow, keep printing new
changes until Ctrl-C.`,
	examples: `  settee changes notes.db
  settee changes notes.db --since 42 --include-docs
  settee changes notes.db --all-leaves --follow`,
	exits: storeExits,
}

func runChanges(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("changes")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	since := fs.Int64("since", 0, "start after this `seq`")
	limit := fs.Int("limit", 0, "print at most `n` rows (0: no limit)")
	includeDocs := fs.Bool("include-docs", false, "include the winning revision of each document")
	allLeaves := fs.Bool("all-leaves", false, "list every leaf revision (style=all_docs), not just the winner")
	descending := fs.Bool("descending", false, "newest first")
	follow := fs.Bool("follow", false, "keep printing new changes until interrupted")
	pos, err := parseFlags(fs, changesHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if *follow && (*descending || *limit > 0) {
		return usageErrorf("--follow cannot be combined with --descending or --limit")
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		opts := localdb.FollowOptions{ChangesOptions: localdb.ChangesOptions{Limit: *limit, Descending: *descending,
			AllDocs: *allLeaves, IncludeDocs: *includeDocs, Conflicts: *includeDocs}}
		if *follow {
			opts.Feed = localdb.FeedContinuous
		}
		emit := func(c *localdb.Change) error { return out.value(c) }
		last, err := db.Follow(ctx, *since, opts, emit)
		if err != nil && !(*follow && ctx.Err() != nil) { // Ctrl-C ends a followed feed normally
			return err
		}
		return out.value(map[string]int64{"last_seq": last})
	})
}
