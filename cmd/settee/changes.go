package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/settee/settee/localdb"
)

var changesHelp = cmdHelp{
	usage: "settee changes [flags] LOCAL.db",
	about: `Print a local store's changes feed, one JSON row per line as CouchDB's
continuous feed does, then {"last_seq":N}. With --follow, keep printing new
changes until Ctrl-C.`,
	examples: `  settee changes notes.db
  settee changes notes.db --since 42 --include-docs
  settee changes notes.db --all-leaves --follow`,
	exits: true,
}

// changeRow is one row of the feed as CouchDB prints it.
type changeRow struct {
	Seq     int64           `json:"seq"`
	ID      string          `json:"id"`
	Changes []revObj        `json:"changes"`
	Deleted bool            `json:"deleted,omitempty"`
	Doc     json.RawMessage `json:"doc,omitempty"`
}

type revObj struct {
	Rev string `json:"rev"`
}

func runChanges(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flagSet("changes")
	since := fs.Int64("since", 0, "start after this `seq`")
	limit := fs.Int("limit", 0, "print at most `n` rows (0: no limit)")
	includeDocs := fs.Bool("include-docs", false, "include the winning revision of each document")
	allLeaves := fs.Bool("all-leaves", false, "list every leaf revision (style=all_docs), not just the winner")
	descending := fs.Bool("descending", false, "newest first")
	follow := fs.Bool("follow", false, "keep printing new changes until interrupted")
	pos, err := parseFlags(fs, changesHelp, args, 1, 1, stdout)
	if err != nil {
		return helpOK(err)
	}
	if *follow && (*descending || *limit > 0) {
		return usageErrorf("--follow cannot be combined with --descending or --limit")
	}
	db, err := openStore(pos[0], false)
	if err != nil {
		return err
	}
	defer closeStore(db, &err)

	opts := localdb.ChangesOptions{Since: *since, Limit: *limit, Descending: *descending,
		AllDocs: *allLeaves, IncludeDocs: *includeDocs, Conflicts: *includeDocs}
	emit := func(c *localdb.Change) error {
		row := changeRow{Seq: c.Seq, ID: c.ID, Deleted: c.Deleted}
		for _, r := range c.Revs {
			row.Changes = append(row.Changes, revObj{r})
		}
		if c.Doc != nil {
			b, err := docJSON(c.Doc)
			if err != nil {
				return err
			}
			row.Doc = b
		}
		return writeLine(stdout, row)
	}
	last, err := db.Changes(ctx, opts, emit)
	if err != nil {
		return err
	}
	for *follow && ctx.Err() == nil {
		if last < opts.Since {
			last = opts.Since
		}
		// WaitForChange wakes on this process's writes only; the store may
		// be written by another process (settee put, an app), so look
		// again at least every second.
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := db.WaitForChange(wctx, last)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			return err
		}
		if ctx.Err() != nil {
			break // Ctrl-C ends a followed feed normally
		}
		opts.Since = last
		if last, err = db.Changes(ctx, opts, emit); err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
	}
	return writeLine(stdout, map[string]int64{"last_seq": last})
}
