package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var getHelp = cmdHelp{
	usage: "settee get [flags] LOCAL.db ID",
	about: `Print a document of a local store as JSON, the winning revision by
default, with its _conflicts when it has any. --deleted-conflicts adds
_deleted_conflicts, the deleted leaves (CouchDB shows them only when
asked too: they are conflicts already resolved by deleting a version).
With --leaves, print every leaf revision (the winner and each conflicting
version) as a JSON array: what you compare before "settee resolve".
Ids starting with _local/ read local (never replicated) documents, such as
replication checkpoints.`,
	examples: `  settee get notes.db shopping-list
  settee get notes.db shopping-list --leaves      # all conflicting versions
  settee get notes.db shopping-list --rev 2-7f3a... --revs
  settee get notes.db _local/<replication-id>     # a replication checkpoint`,
	exits: storeExits,
}

func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("get")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	rev := fs.String("rev", "", "read this `revision` instead of the winner")
	revs := fs.Bool("revs", false, "include the revision history (_revisions)")
	leaves := fs.Bool("leaves", false, "print every leaf revision as a JSON array")
	deleted := fs.Bool("deleted-conflicts", false, "include the deleted leaves (_deleted_conflicts)")
	pos, err := parseFlags(fs, getHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	path, id := pos[0], pos[1]
	if err := checkRev("--rev", *rev, id); err != nil {
		return err
	}
	return withStore(path, false, ks, func(db *localdb.DB) error {
		if couchdoc.IsLocalID(id) {
			doc, err := db.GetLocal(ctx, id)
			if err != nil {
				return fmt.Errorf("get %s: %w", id, err)
			}
			return out.doc(doc)
		}
		opts := localdb.GetOptions{Rev: *rev, Revs: *revs}
		if *leaves {
			var revList []string
			if *rev != "" {
				revList = []string{*rev}
			}
			open, err := db.OpenRevs(ctx, id, revList, opts)
			if err != nil {
				return fmt.Errorf("get %s: %w", id, err)
			}
			leafDocs := make([]json.RawMessage, 0, len(open))
			for _, o := range open {
				if o.Doc == nil {
					b, _ := json.Marshal(map[string]string{"missing": o.Missing})
					leafDocs = append(leafDocs, b)
					continue
				}
				b, err := docJSON(o.Doc)
				if err != nil {
					return err
				}
				leafDocs = append(leafDocs, b)
			}
			if len(leafDocs) == 0 {
				return fmt.Errorf("get %s: %w", id, couchdoc.ErrNotFound)
			}
			return out.value(leafDocs)
		}
		opts.Conflicts, opts.DeletedConflicts = *rev == "", *rev == "" && *deleted
		doc, err := db.Get(ctx, id, opts)
		if err != nil {
			return fmt.Errorf("get %s: %w", id, err)
		}
		return out.doc(doc)
	})
}
