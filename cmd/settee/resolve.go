package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var resolveHelp = cmdHelp{
	usage: "settee resolve [flags] LOCAL.db ID",
	about: `Resolve a document's conflict in a local store.

With --winner REV, keep that version and delete every other live leaf.
With --merge JSON|-|@FILE, write the merged body as a new revision on top of
the winner (the current one, or --winner) and delete the other leaves; the
winner's attachments are kept unless the merged body lists _attachments.
With neither, keep the revision CouchDB's rules already picked.

The merged version is written before any leaf is deleted, so an
interrupted resolve loses nothing; run it again to finish. Replicate
afterwards (settee sync) so the other replicas learn the resolution.
Prints {"ok":true,"id":...,"rev":WINNER,"deleted":[...]}.`,
	examples: `  settee get notes.db shopping-list --leaves     # compare the versions
  settee resolve notes.db shopping-list --winner 2-9b1e...
  settee resolve notes.db shopping-list --merge '{"items":["milk","eggs","tea"]}'`,
	exits: true,
}

func runResolve(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flagSet("resolve")
	winner := fs.String("winner", "", "the leaf `revision` to keep (default: the current winner)")
	merge := fs.String("merge", "", "write this merged body (`JSON`, - or @FILE) on the winner")
	pos, err := parseFlags(fs, resolveHelp, args, 2, 2, stdout)
	if err != nil {
		return helpOK(err)
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
	db, err := openStore(pos[0], false)
	if err != nil {
		return err
	}
	defer closeStore(db, &err)
	res, err := resolveConflict(ctx, db, pos[1], *winner, merged)
	if err != nil {
		return err
	}
	return writeLine(stdout, res)
}

// resolution is what resolveConflict did.
type resolution struct {
	OK      bool     `json:"ok"`
	ID      string   `json:"id"`
	Rev     string   `json:"rev"`
	Deleted []string `json:"deleted"`
}

// resolveConflict keeps winner (or the current winner when empty), first
// writing merged on it when given, then deletes the other live leaves.
func resolveConflict(ctx context.Context, db *localdb.DB, id, winner string, merged *couchdoc.Doc) (*resolution, error) {
	cur, err := db.Get(ctx, id, localdb.GetOptions{Conflicts: true})
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", id, err)
	}
	live := append([]string{cur.Rev}, cur.Conflicts...)
	if len(live) < 2 {
		return nil, fmt.Errorf("resolve %s: the document has no conflicts", id)
	}
	if winner == "" {
		winner = cur.Rev
	}
	if !slices.Contains(live, winner) {
		return nil, &exitError{code: exitNotFound,
			msg: fmt.Sprintf("resolve %s: %s is not a live leaf revision (leaves: %v)", id, winner, live)}
	}
	res := &resolution{OK: true, ID: id, Rev: winner}
	if merged != nil {
		base, err := db.Get(ctx, id, localdb.GetOptions{Rev: winner})
		if err != nil {
			return nil, fmt.Errorf("resolve %s: read %s: %w", id, winner, err)
		}
		merged.ID, merged.Rev, merged.Deleted = id, winner, false
		if merged.Attachments == nil && len(base.Attachments) > 0 {
			merged.Attachments = make(map[string]*couchdoc.Attachment, len(base.Attachments))
			for name, a := range base.Attachments {
				merged.Attachments[name] = &couchdoc.Attachment{Name: name, ContentType: a.ContentType,
					Digest: a.Digest, Length: a.Length, RevPos: a.RevPos, Stub: true}
			}
		}
		if res.Rev, err = db.Put(ctx, merged); err != nil {
			return nil, fmt.Errorf("resolve %s: write the merge: %w", id, err)
		}
	}
	for _, rev := range live {
		if rev == winner {
			continue
		}
		if _, err := db.Delete(ctx, id, rev); err != nil {
			return nil, fmt.Errorf("resolve %s: delete %s: %w", id, rev, err)
		}
		res.Deleted = append(res.Deleted, rev)
	}
	return res, nil
}
