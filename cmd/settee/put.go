package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var putHelp = cmdHelp{
	usage: "settee put [flags] LOCAL.db [ID] JSON|-|@FILE",
	about: `Create or update a document in a local store (the store is created if
missing). The body is literal JSON, "-" for stdin or @FILE. The id comes
from the ID argument, else from the body's _id, else a random one.

As in CouchDB, updating a document names the revision it replaces: give
_rev in the body or --rev, or --update to replace the current winner.
A stale revision fails with a conflict (exit code 6). Prints
{"ok":true,"id":...,"rev":...}.`,
	examples: `  settee put notes.db shopping-list '{"items":["milk"]}'
  settee put notes.db shopping-list --update '{"items":["milk","eggs"]}'
  settee put notes.db shopping-list --rev 1-2c3d... @list.json
  echo '{"_id":"todo","done":false}' | settee put notes.db -
  settee put notes.db --validate-as '{"name":"ann","roles":["editor"]}' list @list.json`,
	exits: writeExits,
}

func runPut(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("put")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	rev := fs.String("rev", "", "the `revision` this edit replaces")
	update := fs.Bool("update", false, "replace the current winning revision (no --rev needed)")
	va := validateAsFlag(fs)
	pos, err := parseFlags(fs, putHelp, args, 2, 3, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if err := va.check(); err != nil {
		return err
	}
	body := pos[len(pos)-1]
	raw, err := readJSONArg(body, os.Stdin)
	if err != nil {
		return err
	}
	doc, err := couchdoc.ParseDoc(raw)
	if err != nil {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("document: %v", err)}
	}
	if len(pos) == 3 {
		doc.ID = pos[1] // an empty ID argument is refused below, as CouchDB refuses ""
	} else if doc.ID == "" {
		doc.ID = randomID()
	}
	if err := couchdoc.ValidateDocID(doc.ID); err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if err := checkRev("--rev", *rev, doc.ID); err != nil {
		return err
	}
	if *rev != "" {
		doc.Rev = *rev
	}
	return va.withStore(pos[0], true, ks, func(db *localdb.DB) error {
		if couchdoc.IsLocalID(doc.ID) {
			if *update && doc.Rev == "" {
				if cur, err := db.GetLocal(ctx, doc.ID); err == nil {
					doc.Rev = cur.Rev
				}
			}
			newRev, err := db.PutLocal(ctx, doc)
			if err != nil {
				return fmt.Errorf("put %s: %w", doc.ID, err)
			}
			return out.value(okResult{true, doc.ID, newRev})
		}
		if *update && doc.Rev == "" {
			cur, err := db.Get(ctx, doc.ID, localdb.GetOptions{})
			switch {
			case err == nil:
				doc.Rev = cur.Rev
			case !errors.Is(err, couchdoc.ErrNotFound):
				return fmt.Errorf("put %s: %w", doc.ID, err)
			}
		}
		newRev, err := db.Put(ctx, doc)
		if err != nil {
			return fmt.Errorf("put %s: %w", doc.ID, err)
		}
		return out.value(okResult{true, doc.ID, newRev})
	})
}

// okResult is CouchDB's answer to a successful write.
type okResult struct {
	OK  bool   `json:"ok"`
	ID  string `json:"id"`
	Rev string `json:"rev"`
}

// randomID returns a new document id like CouchDB's: 32 hex digits.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
