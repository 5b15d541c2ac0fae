package main

import (
	"context"
	"fmt"
	"io"

	"github.com/settee/settee/localdb"
)

var purgeHelp = cmdHelp{
	usage: "settee purge LOCAL.db ID [REV...]",
	about: `Remove a document from a local store for good, as CouchDB's _purge: no
tombstone is left and nothing is replicated. Without REV every leaf goes
(the whole document); with REVs only those leaf revisions. Purges are
local: a later pull brings the document back only if it changes on the
remote. Prints {"id": [purged revisions]}. Run "settee compact" to give the
space back.`,
	examples: `  settee purge notes.db secret-draft
  settee purge notes.db shopping-list 3-a1b2...   # drop one conflicting leaf`,
	exits: storeExits,
}

func runPurge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("purge")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, purgeHelp, args, 2, -1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		id, revs := pos[1], pos[2:]
		if len(revs) == 0 {
			leaves, err := db.OpenRevs(ctx, id, nil, localdb.GetOptions{})
			if err != nil {
				return fmt.Errorf("purge %s: %w", id, err)
			}
			for _, l := range leaves {
				if l.Doc != nil {
					revs = append(revs, l.Doc.Rev)
				}
			}
		}
		res, err := db.Purge(ctx, map[string][]string{id: revs})
		if err != nil {
			return fmt.Errorf("purge %s: %w", id, err)
		}
		return out.value(res)
	})
}
