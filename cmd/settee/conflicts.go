package main

import (
	"context"
	"fmt"
	"io"

	"github.com/settee/settee/localdb"
)

var conflictsHelp = cmdHelp{
	usage: "settee conflicts [flags] LOCAL.db",
	about: `List the documents of a local store that have conflicts, one JSON value
each (one line each when piped): the id, the winning revision CouchDB's rules picked, and the other
(conflicting) leaf revisions. Resolve them with "settee resolve".`,
	examples: `  settee conflicts notes.db
  settee conflicts notes.db --ids     # just the ids, one per line`,
	exits: storeExits,
}

func runConflicts(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("conflicts")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	idsOnly := fs.Bool("ids", false, "print only the document ids")
	pos, err := parseFlags(fs, conflictsHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		// Collect the ids first: the store may hold a read transaction open
		// while it calls back.
		var ids []string
		if err := db.Conflicts(ctx, func(id string) error {
			ids = append(ids, id)
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			if *idsOnly {
				if _, err := fmt.Fprintln(stdout, id); err != nil {
					return err
				}
				continue
			}
			doc, err := db.Get(ctx, id, localdb.GetOptions{Conflicts: true})
			if err != nil {
				return fmt.Errorf("get %s: %w", id, err)
			}
			if err := out.value(struct {
				ID        string   `json:"id"`
				Rev       string   `json:"rev"`
				Conflicts []string `json:"conflicts"`
			}{id, doc.Rev, doc.Conflicts}); err != nil {
				return err
			}
		}
		return nil
	})
}
