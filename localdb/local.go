package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// Local documents (_local/...) are stored apart: never in the changes feed,
// never replicated, not counted. Their revisions are "0-N".

func localRevNum(rev string) (int64, bool) {
	if !strings.HasPrefix(rev, "0-") {
		return 0, false
	}
	n, err := strconv.ParseInt(rev[2:], 10, 64)
	return n, err == nil && n >= 0
}

// GetLocal returns a local document (id with its "_local/" prefix), or
// ErrNotFound.
func (db *DB) GetLocal(ctx context.Context, id string) (*couchdoc.Doc, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.leave()
	if !couchdoc.IsLocalID(id) {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "not a local document id: %q", id)
	}
	var row localRow
	err := db.reads.conns.GetContext(ctx, &row, "SELECT id, rev, body FROM local_docs WHERE id = ?", id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
	}
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", id, err)
	}
	return row.doc(), nil
}

// localRow is a local_docs row: its rev is the "N" of "0-N".
type localRow struct {
	ID   string `db:"id"`
	Rev  int64  `db:"rev"`
	Body []byte `db:"body"`
}

func (r *localRow) doc() *couchdoc.Doc {
	return &couchdoc.Doc{ID: r.ID, Rev: "0-" + strconv.FormatInt(r.Rev, 10), Body: r.Body}
}

// PutLocal writes a local document; doc.Rev must be its current "0-N" (or
// "" when it does not exist), else ErrConflict. doc.Deleted deletes it.
func (db *DB) PutLocal(ctx context.Context, doc *couchdoc.Doc) (string, error) {
	if err := db.enter(); err != nil {
		return "", err
	}
	defer db.leave()
	var rev string
	err := db.update(ctx, func(w *wtx) error {
		var err error
		rev, err = w.putLocal(doc)
		return err
	})
	return rev, err
}

// DeleteLocal deletes a local document at its current rev.
func (db *DB) DeleteLocal(ctx context.Context, id, rev string) error {
	_, err := db.PutLocal(ctx, &couchdoc.Doc{ID: id, Rev: rev, Deleted: true})
	return err
}

func (w *wtx) putLocal(doc *couchdoc.Doc) (string, error) {
	if err := couchdoc.ValidateDocID(doc.ID); err != nil {
		return "", err
	}
	if !couchdoc.IsLocalID(doc.ID) {
		return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "bad local document id %q", doc.ID)
	}
	body, err := doc.ValidBody()
	if err != nil {
		return "", err
	}
	var cur int64
	err = w.QueryRow(qLocalRev, doc.ID).Scan(&cur)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	if doc.Rev != "" {
		n, ok := localRevNum(doc.Rev)
		if !ok {
			if _, _, perr := couchdoc.ParseRev(doc.Rev); perr != nil {
				return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "Invalid rev format")
			}
			return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
		}
		if !exists || n != cur {
			if doc.Deleted && !exists {
				return "", couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
			}
			return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
		}
	} else if exists {
		return "", couchdoc.Errorf(couchdoc.ErrConflict, "Document update conflict.")
	}
	if doc.Deleted {
		if !exists {
			return "", couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		if _, err := w.Exec(qDeleteLocal, doc.ID); err != nil {
			return "", err
		}
		return "0-0", nil
	}
	next := cur + 1
	if _, err := w.Exec(qUpsertLocal,
		doc.ID, next, body); err != nil {
		return "", err
	}
	return "0-" + strconv.FormatInt(next, 10), nil
}

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
		_, err := w.Exec(qUpsertLocal, id, rev, body)
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
		err := w.QueryRow(qLocalRev, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		if err != nil {
			return err
		}
		_, err = w.Exec(qDeleteLocal, id)
		return err
	})
}

// LocalDocs calls fn with every local document in id order (ids with
// their "_local/" prefix), bodies included: CouchDB's _local_docs.
func (db *DB) LocalDocs(ctx context.Context, fn func(*couchdoc.Doc) error) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	rows, err := db.reads.conns.QueryxContext(ctx, "SELECT id, rev, body FROM local_docs ORDER BY id")
	if err != nil {
		return fmt.Errorf("list local documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var row localRow
		if err := rows.StructScan(&row); err != nil {
			return fmt.Errorf("list local documents: %w", err)
		}
		if err := fn(row.doc()); err != nil {
			return err
		}
	}
	return rows.Err()
}
