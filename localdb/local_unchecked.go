package localdb

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/settee/settee/couchdoc"
)

// Local documents as CouchDB's HTTP API writes them: without a revision
// check. CouchDB accepts any "0-N" (a stale one too) and stores the next
// number, resets a document written without _rev to "0-1", and deletes at
// any rev. PutLocal keeps the stricter check for callers in this process.

// SetLocal writes a local document (doc.ID with its "_local/" prefix; its
// Rev is not read) as revision "0-(n+1)", where n is the number of the rev
// it was sent with (0 when none), whatever the stored revision is. It
// returns the new rev.
func (db *DB) SetLocal(ctx context.Context, doc *couchdoc.Doc, n int64) (string, error) {
	if err := db.enter(); err != nil {
		return "", err
	}
	defer db.leave()
	id := doc.ID
	if !couchdoc.IsLocalID(id) || len(id) == len(couchdoc.LocalPrefix) {
		return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "bad local document id %q", id)
	}
	body, err := doc.ValidBody()
	if err != nil {
		return "", err
	}
	rev := n + 1
	err = db.update(ctx, func(w *wtx) error {
		_, err := w.exec(qUpsertLocal, id, rev, body)
		return err
	})
	if err != nil {
		return "", err
	}
	return "0-" + strconv.FormatInt(rev, 10), nil
}

// RemoveLocal deletes a local document at whatever revision it has, or
// returns ErrNotFound.
func (db *DB) RemoveLocal(ctx context.Context, id string) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.update(ctx, func(w *wtx) error {
		var cur int64
		err := w.queryRow(qLocalRev, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		if err != nil {
			return err
		}
		_, err = w.exec(qDeleteLocal, id)
		return err
	})
}
