package localdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// Security returns the database's security object as stored by
// SetSecurity, or nil when none was ever set (the server then applies
// its default). The store keeps it; enforcing it is the server's job.
func (db *DB) Security(ctx context.Context) (json.RawMessage, error) {
	var raw sql.NullString
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'security'").Scan(&raw)
	})
	if errors.Is(err, sql.ErrNoRows) || err == nil && !raw.Valid {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return json.RawMessage(raw.String), nil
}

// SetSecurity stores a security object (a JSON object, which the caller
// has validated) and, as CouchDB's set_security, moves the update
// sequence once.
func (db *DB) SetSecurity(ctx context.Context, raw json.RawMessage) error {
	return db.storeSecurity(ctx, raw, true)
}

// InitSecurity stores the security object a new database starts with,
// without moving the update sequence: CouchDB sets it as it creates the
// database, so a new database still reports update_seq 0.
func (db *DB) InitSecurity(ctx context.Context, raw json.RawMessage) error {
	return db.storeSecurity(ctx, raw, false)
}

func (db *DB) storeSecurity(ctx context.Context, raw json.RawMessage, bump bool) error {
	if !json.Valid(raw) {
		return errors.New("localdb: security object is not JSON")
	}
	if err := db.enter(); err != nil {
		return err
	}
	defer db.leave()
	return db.update(ctx, func(w *wtx) error {
		if _, err := w.tx.ExecContext(ctx, qUpsertSecurity, string(raw)); err != nil || !bump {
			return err
		}
		return w.bumpSeq()
	})
}

const qUpsertSecurity = "INSERT INTO meta (key, value) VALUES ('security', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
