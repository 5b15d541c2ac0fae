package main

import (
	"context"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var deleteHelp = cmdHelp{
	usage: "settee delete [flags] LOCAL.db ID",
	about: `Delete a document of a local store: write a tombstone on the revision
named by --rev, or on the current winner when --rev is not given. Naming a
conflicting (losing) revision deletes just that version, which is one way
to resolve a conflict by hand. Prints {"ok":true,"id":...,"rev":...}.`,
	examples: `  settee delete notes.db shopping-list
  settee delete notes.db shopping-list --rev 2-9b1e...   # drop one conflicting version`,
	exits: writeExits,
}

func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("delete")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	rev := fs.String("rev", "", "the `revision` to delete (default: the current winner)")
	va := validateAsFlag(fs)
	pos, err := parseFlags(fs, deleteHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if err := va.check(); err != nil {
		return err
	}
	id := pos[1]
	if err := checkRev("--rev", *rev, id); err != nil {
		return err
	}
	return va.withStore(pos[0], false, ks, func(db *localdb.DB) error {
		if couchdoc.IsLocalID(id) {
			r := *rev
			if r == "" {
				cur, err := db.GetLocal(ctx, id)
				if err != nil {
					return fmt.Errorf("delete %s: %w", id, err)
				}
				r = cur.Rev
			}
			if err := db.DeleteLocal(ctx, id, r); err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			return out.value(okResult{true, id, "0-0"}) // CouchDB's answer
		}
		r := *rev
		if r == "" {
			cur, err := db.Get(ctx, id, localdb.GetOptions{})
			if err != nil {
				return fmt.Errorf("delete %s: %w", id, err)
			}
			r = cur.Rev
		}
		newRev, err := db.Delete(ctx, id, r)
		if err != nil {
			return fmt.Errorf("delete %s: %w", id, err)
		}
		return out.value(okResult{true, id, newRev})
	})
}
