package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

var exportHelp = cmdHelp{
	usage: "settee export [flags] LOCAL.db > docs.ndjson",
	about: `Write every document of a local store to stdout, one JSON document per
line (NDJSON), in the order of the changes feed. Each line is one leaf
revision as CouchDB's replication sends it: the winner, each conflicting
version and each deleted leaf, with its _rev and _revisions (the history)
and its attachments' bytes inline as base64 "data". "settee import" reads
it back into the same revision trees' leaves (older revisions' bodies are
not kept, as after a compaction), so a store rebuilt from an export syncs
with its server without sending anything again. _local documents
(replication checkpoints) are not exported. An attachment body a lazy pull
left behind is exported as a stub and imported as not downloaded.

With --skip-unreadable, a document the store cannot read (a damaged file,
see "settee check") is left out and named on stderr instead of stopping
the export.`,
	examples: `  settee export notes.db > notes.ndjson
  settee export notes.db | gzip > notes.ndjson.gz
  settee export damaged.db --skip-unreadable > saved.ndjson`,
	exits: storeExits,
}

// exportPage is how many feed rows export reads per store read.
const exportPage = 500

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("export")
	ks := keyFlag(fs)
	skip := fs.Bool("skip-unreadable", false, "leave out (and name on stderr) the documents that cannot be read")
	pos, err := parseFlags(fs, exportHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 256<<10)
	err = withStore(pos[0], false, ks, func(db *localdb.DB) error {
		var written, skipped int64
		salvage := ""
		if *skip {
			salvage = db.Path()
		}
		err := exportDocs(ctx, db, salvage, func(id string, leaves []localdb.OpenRev, err error) error {
			if err != nil {
				if !*skip {
					return fmt.Errorf("export %s: %w (--skip-unreadable leaves such documents out)", id, err)
				}
				skipped++
				fmt.Fprintf(stderr, "settee: export: skipped %q: %v\n", id, oneLine(err.Error()))
				return nil
			}
			for _, l := range leaves {
				if l.Doc == nil {
					continue
				}
				b, err := exportLine(l.Doc)
				if err != nil {
					return fmt.Errorf("export %s: %w", id, err)
				}
				if _, err := w.Write(b); err != nil {
					return err
				}
				written++
			}
			return nil
		})
		if err == nil && skipped > 0 {
			err = &exitError{code: exitFailure, msg: fmt.Sprintf("export: %s written, %s unreadable and left out", plural(written, "revision"), plural(skipped, "document"))}
		}
		return err
	})
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// exportDocs calls fn with every leaf of every document, a page of feed
// rows at a time: the ids are read first, then each document outside the
// feed's read. A document that cannot be read comes with its error. When
// salvage names the store's file and the feed cannot be read (a damaged
// file), the ids are read from the file itself (salvageIDs), and fn is
// called only for those it has not been called for yet: each document is
// given at most once however the listing breaks off.
func exportDocs(ctx context.Context, db *localdb.DB, salvage string, fn func(id string, leaves []localdb.OpenRev, err error) error) error {
	var done map[string]bool // the ids given to fn, kept only to salvage
	if salvage != "" {
		done = map[string]bool{}
		inner := fn
		fn = func(id string, leaves []localdb.OpenRev, err error) error {
			if done[id] {
				return nil
			}
			done[id] = true
			return inner(id, leaves, err)
		}
	}
	var since int64
	for {
		var ids []string
		last, err := db.Changes(ctx, localdb.ChangesOptions{Since: since, Limit: exportPage}, func(c *localdb.Change) error {
			ids = append(ids, c.ID)
			return nil
		})
		if err != nil && salvage != "" {
			// A damaged file: list what it still holds from the file
			// itself, which starts over from the first document.
			ids, serr := salvageIDs(ctx, salvage)
			if len(ids) == 0 && serr != nil {
				return fmt.Errorf("read the changes feed after seq %d: %w", since, err)
			}
			return readLeaves(ctx, db, slices.DeleteFunc(ids, func(id string) bool { return done[id] }), fn)
		}
		if err != nil {
			return fmt.Errorf("read the changes feed after seq %d: %w", since, err)
		}
		if err := readLeaves(ctx, db, ids, fn); err != nil {
			return err
		}
		if len(ids) < exportPage || last <= since {
			return nil
		}
		since = last
	}
}

// readLeaves reads every leaf of each document of ids and calls fn.
func readLeaves(ctx context.Context, db *localdb.DB, ids []string, fn func(id string, leaves []localdb.OpenRev, err error) error) error {
	for _, id := range ids {
		leaves, err := db.OpenRevs(ctx, id, nil, localdb.GetOptions{Revs: true, Attachments: true})
		if err == nil {
			err = inlineBodies(leaves)
		}
		if ferr := fn(id, leaves, err); ferr != nil {
			return ferr
		}
	}
	return nil
}

// inlineBodies reads the streamed attachment bodies of leaves into Data,
// so that they are written as base64 "data", and closes them.
func inlineBodies(leaves []localdb.OpenRev) error {
	var first error
	for _, l := range leaves {
		if l.Doc == nil {
			continue
		}
		for _, a := range l.Doc.Attachments {
			if a.Body == nil {
				continue
			}
			b, err := io.ReadAll(a.Body)
			if c, ok := a.Body.(io.Closer); ok {
				c.Close()
			}
			a.Body = nil
			if err != nil && first == nil {
				first = fmt.Errorf("attachment %q: %w", a.Name, err)
			}
			a.Data, a.DataDigest = b, ""
		}
	}
	return first
}

// exportLine is a leaf's line: its JSON and a newline.
func exportLine(doc *couchdoc.Doc) ([]byte, error) {
	b, err := doc.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
