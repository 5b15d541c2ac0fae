package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var resolveHelp = cmdHelp{
	usage: "settee resolve [flags] LOCAL.db ID",
	about: `Resolve a document's conflict in a local store.

With --winner REV, keep that version and delete every other live leaf.
With --merge JSON|-|@FILE, write the merged body as a new revision on top of
the winner (the current one, or --winner) and delete the other leaves; the
winner's attachments are kept unless the merged body lists _attachments
(then it has exactly those).
With neither, keep the revision CouchDB's rules already picked.

A document without conflicts has nothing to resolve: resolve says so on
stderr, prints {"ok":true,"id":...,"rev":WINNER,"deleted":[]} and exits 0,
unless a --merge body was given (it is not written: exit 1; use
"settee put --update" to write it). A --winner that is not a live leaf
is not found (exit 5).

The merge and the deletions are written in one transaction: an
interrupted resolve writes nothing. Replicate afterwards (settee sync) so
the other replicas learn the resolution.
Prints {"ok":true,"id":...,"rev":WINNER,"deleted":[...]}.`,
	examples: `  settee get notes.db shopping-list --leaves     # compare the versions
  settee resolve notes.db shopping-list --winner 2-9b1e...
  settee resolve notes.db shopping-list --merge '{"items":["milk","eggs","tea"]}'`,
	exits: writeExits,
}

func runResolve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("resolve")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	winner := fs.String("winner", "", "the leaf `revision` to keep (default: the current winner)")
	merge := fs.String("merge", "", "write this merged body (`JSON`, - or @FILE) on the winner")
	pos, err := parseFlags(fs, resolveHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if err := checkRev("--winner", *winner, pos[1]); err != nil {
		return err
	}
	var merged *couchdoc.Doc
	if *merge != "" {
		raw, err := readJSONArg(*merge, os.Stdin)
		if err != nil {
			return err
		}
		if merged, err = couchdoc.ParseDoc(raw); err != nil {
			return &exitError{code: exitUsage, msg: fmt.Sprintf("merged document: %v", err)}
		}
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		res, err := resolveConflict(ctx, db, pos[1], *winner, merged)
		if errors.Is(err, localdb.ErrNoConflict) {
			return noConflict(ctx, db, pos[1], merged != nil, out, stderr)
		}
		if err != nil {
			return err
		}
		return out.value(res)
	})
}

// resolution is what the resolve command prints.
type resolution struct {
	OK      bool     `json:"ok"`
	ID      string   `json:"id"`
	Rev     string   `json:"rev"`
	Deleted []string `json:"deleted"`
}

// resolveConflict runs localdb's ResolveConflict (one transaction) and
// words its errors for the command line.
func resolveConflict(ctx context.Context, db *localdb.DB, id, winner string, merged *couchdoc.Doc) (*resolution, error) {
	res, err := db.ResolveConflict(ctx, id, winner, merged)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", id, err)
	}
	return &resolution{OK: true, ID: id, Rev: res.Rev, Deleted: res.Deleted}, nil
}

// noConflict answers a resolve of a document with a single live leaf:
// nothing to do, which is success unless the caller asked for a write
// (--merge). A --winner that is not the document's leaf never gets here
// (ResolveConflict finds it missing first).
func noConflict(ctx context.Context, db *localdb.DB, id string, merge bool, out *output, stderr io.Writer) error {
	cur, err := db.Get(ctx, id, localdb.GetOptions{})
	if err != nil {
		return fmt.Errorf("resolve %s: %w", id, err)
	}
	if merge {
		return fmt.Errorf("resolve %s: the document has no conflicts, so the merged body was not written (settee put --update writes it)", id)
	}
	fmt.Fprintf(stderr, "settee: resolve %s: the document has no conflicts: nothing to resolve\n", id)
	return out.value(&resolution{OK: true, ID: id, Rev: cur.Rev, Deleted: []string{}})
}
