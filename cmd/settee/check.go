package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"

	"github.com/settee/settee/localdb"
	"modernc.org/sqlite"
)

var checkHelp = cmdHelp{
	usage: "settee check [flags] LOCAL.db",
	about: `Check a local store: SQLite's integrity check of the file, then the
store's own invariants (every document has one winner and a body for each
leaf, sequences are unique, counts and indexes agree, attachments are
whole), then that every document can be read. Only reads the file.

Prints {"path","ok","integrity","docs","unreadable","unreadable_count"}
and exits 0 when the store is sound. For a damaged store it adds
"invariants" (the first broken one), "open_error" (when it cannot be
opened) and "next" (what to do). A damaged store exits 1 and says what
to do next: how many documents it can still read ("settee export
--skip-unreadable" saves them, "settee import" writes them into a new
store) and that a new pull rebuilds what the server has.`,
	examples: `  settee check notes.db
  settee export notes.db --skip-unreadable > saved.ndjson   # if damaged
  settee pull new.db URL && settee import new.db < saved.ndjson`,
	exits: storeExits,
}

// checkReport is what check prints.
type checkReport struct {
	Path       string   `json:"path"`
	OK         bool     `json:"ok"`
	Integrity  []string `json:"integrity"`            // SQLite's findings; ["ok"] when sound
	Invariants string   `json:"invariants,omitempty"` // the first broken invariant
	Open       string   `json:"open_error,omitempty"` // why the store could not be opened
	Docs       int64    `json:"docs"`                 // documents found
	Unreadable []string `json:"unreadable"`           // ids (at most maxListed) of the documents that cannot be read
	NUnread    int64    `json:"unreadable_count"`     // how many cannot be read
	Next       string   `json:"next,omitempty"`       // what to do about a damaged store
}

// maxListed bounds the findings and ids check lists.
const maxListed = 20

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flagSet("check")
	ks := keyFlag(fset)
	out := outputFlags(fset, stdout)
	pos, err := parseFlags(fset, checkHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	path := pos[0]
	rep := checkReport{Path: path, Unreadable: []string{}}
	key, _, err := ks.options(path)
	if err != nil {
		return err
	}
	db, oerr := localdb.Open(path, &localdb.Options{NoCreate: true, Key: key})
	if oerr != nil && !isDamaged(oerr) && !errors.Is(oerr, localdb.ErrAuthFailed) {
		_, err := openStore(path, false, ks) // its words for a missing or foreign file
		if err == nil {
			err = oerr
		}
		return err
	}
	switch {
	case key == nil:
		rep.Integrity = integrityCheck(ctx, path)
	case oerr == nil:
		// Through the store, which reads (and authenticates) every page.
		var err error
		if rep.Integrity, err = db.IntegrityCheck(ctx); err != nil {
			rep.Integrity = append(rep.Integrity, oneLine(err.Error()))
		}
	default:
		rep.Integrity = []string{oneLine(oerr.Error())}
	}
	if oerr != nil {
		rep.Open = oerr.Error()
	} else {
		if err := db.CheckInvariants(ctx); err != nil {
			rep.Invariants = oneLine(err.Error())
		}
		rep.Docs, rep.NUnread, rep.Unreadable = readableDocs(ctx, db, path)
		if err := db.Close(); err != nil && rep.Open == "" {
			rep.Open = err.Error()
		}
	}
	rep.OK = rep.Open == "" && rep.Invariants == "" && rep.NUnread == 0 &&
		len(rep.Integrity) == 1 && rep.Integrity[0] == "ok"
	if rep.OK {
		return out.value(rep)
	}
	rep.Next = damagedNext(path, rep)
	if err := out.value(rep); err != nil {
		return err
	}
	return &exitError{code: exitFailure, msg: fmt.Sprintf("%s is damaged: %s", path, rep.Next)}
}

// damagedNext is the next step for a damaged store.
func damagedNext(path string, rep checkReport) string {
	rebuild := "settee pull new.db URL rebuilds what the server has in a new file"
	if rep.Open != "" {
		return "it cannot be opened, so no document can be read from it. Next: move it aside; " + rebuild
	}
	return fmt.Sprintf("%d of %s can still be read. Next: settee export %s --skip-unreadable > saved.ndjson saves them "+
		"(local changes not yet pushed are among them); %s; settee import new.db < saved.ndjson adds the saved ones",
		rep.Docs-rep.NUnread, plural(rep.Docs, "document"), path, rebuild)
}

// integrityCheck runs SQLite's integrity_check on the file, read only,
// and returns its findings (["ok"] for a sound file).
func integrityCheck(ctx context.Context, path string) []string {
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return []string{err.Error()}
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return []string{err.Error()}
	}
	defer rows.Close()
	var out []string
	for rows.Next() && len(out) < maxListed {
		var s string
		if err := rows.Scan(&s); err != nil {
			return append(out, err.Error())
		}
		out = append(out, strings.Split(strings.TrimSpace(s), "\n")...)
	}
	if len(out) > maxListed {
		out = out[:maxListed]
	}
	if err := rows.Err(); err != nil {
		out = append(out, err.Error())
	}
	if len(out) == 0 {
		out = []string{"no answer"}
	}
	return out
}

// readableDocs reads every document the store lists and returns how many
// it lists, how many it cannot read and the ids (at most maxListed) of
// those. A list that breaks off counts as one more unreadable entry.
func readableDocs(ctx context.Context, db *localdb.DB, path string) (n, nBad int64, bad []string) {
	bad = []string{}
	err := exportDocs(ctx, db, path, func(id string, _ []localdb.OpenRev, err error) error {
		n++
		if err != nil {
			nBad++
			if len(bad) < maxListed {
				bad = append(bad, id)
			}
		}
		return nil
	})
	if err != nil {
		nBad++
		bad = append(bad, "(the list of documents: "+oneLine(err.Error())+")")
	}
	return n, nBad, bad
}

// isDamaged reports a SQLite file damaged (SQLITE_CORRUPT), as opposed to
// one that is not a database, missing or not a store.
func isDamaged(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqliteCorrupt && !errors.Is(err, fs.ErrNotExist)
}

// sqliteCorrupt is SQLITE_CORRUPT: "database disk image is malformed".
const sqliteCorrupt = 11
