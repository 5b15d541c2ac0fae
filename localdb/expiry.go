package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// sweepBatch is how many expired documents one purge transaction takes.
const sweepBatch = 100

// sweepRetry is how long the sweeper waits after a failed sweep.
const sweepRetry = time.Minute

// SetExpiration makes document id expire at t: from then on the store
// purges it (every leaf; see Purge) by itself, while open, or when next
// opened if it expired while closed. The expiration is local to this store,
// as in Couchbase Lite: it is not part of the document and never
// replicated. The zero time clears it. A missing document is ErrNotFound;
// a _local id is ErrBadRequest. A time already past purges the document
// soon after the call returns.
func (db *DB) SetExpiration(ctx context.Context, id string, t time.Time) error {
	if couchdoc.IsLocalID(id) {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "_local documents do not expire")
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	err := db.update(ctx, func(w *wtx) error {
		if t.IsZero() {
			_, err := w.tx.ExecContext(ctx, "DELETE FROM expirations WHERE id = ?", id)
			return err
		}
		var one int
		err := w.tx.QueryRowContext(ctx, "SELECT 1 FROM docs WHERE id = ?", id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
		}
		if err != nil {
			return err
		}
		_, err = w.tx.ExecContext(ctx, "INSERT INTO expirations (id, at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at", id, t.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("set expiration of %q: %w", id, err)
	}
	db.kickSweeper()
	return nil
}

// Expiration returns when document id expires; the zero time when it
// does not.
func (db *DB) Expiration(ctx context.Context, id string) (time.Time, error) {
	var at int64
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT at FROM expirations WHERE id = ?", id).Scan(&at)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("expiration of %q: %w", id, err)
	}
	return time.UnixMilli(at), nil
}

// PurgeExpired purges every document whose expiration is at or before now
// and returns how many it purged. The sweeper calls it; it is exported for
// apps that want to sweep at a moment of their choosing.
func (db *DB) PurgeExpired(ctx context.Context, now time.Time) (int, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	total := 0
	for {
		var n int
		err := db.writeDocs(ctx, attWriter{}, func(w *docWriter) error {
			rows, err := w.tx.QueryContext(ctx, "SELECT id FROM expirations WHERE at <= ? ORDER BY at LIMIT ?", now.UnixMilli(), sweepBatch)
			if err != nil {
				return err
			}
			ids, err := scanAll[string](rows)
			if err != nil {
				return err
			}
			n = len(ids)
			if n == 0 {
				return nil
			}
			sort.Strings(ids)
			out := make(map[string][]string, n)
			allLeaves := func(st *docState) []revtree.Rev {
				var revs []revtree.Rev
				for _, l := range st.tree.Leaves() {
					revs = append(revs, st.tree.Nodes[l].Rev)
				}
				return revs
			}
			if err := w.purge(ids, allLeaves, nil, out); err != nil {
				return err
			}
			for _, id := range ids { // rows of documents already gone
				if _, err := w.tx.ExecContext(ctx, "DELETE FROM expirations WHERE id = ?", id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("purge expired: %w", err)
		}
		total += n
		if n < sweepBatch {
			return total, nil
		}
	}
}

// nextExpiry returns the earliest expiration; the zero time when none.
func (db *DB) nextExpiry(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT MIN(at) FROM expirations").Scan(&at)
	})
	if err != nil || !at.Valid {
		return time.Time{}, err
	}
	return time.UnixMilli(at.Int64), nil
}

func (db *DB) kickSweeper() {
	select {
	case db.kick <- struct{}{}:
	default:
	}
}

// sweeper purges documents as they expire, until ctx ends (Close). It
// sleeps until the earliest expiration or until SetExpiration kicks it; a
// failed sweep is tried again after sweepRetry.
func (db *DB) sweeper(ctx context.Context) {
	defer db.sweeps.Done()
	for {
		next, err := db.nextExpiry(ctx)
		if err == nil && !next.IsZero() && !next.After(time.Now()) {
			if _, err = db.PurgeExpired(ctx, time.Now()); err == nil {
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		var timer *time.Timer
		var fire <-chan time.Time
		switch {
		case err != nil:
			timer = time.NewTimer(sweepRetry)
		case !next.IsZero():
			timer = time.NewTimer(time.Until(next))
		}
		if timer != nil {
			fire = timer.C
		}
		select {
		case <-ctx.Done():
		case <-db.kick:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}
