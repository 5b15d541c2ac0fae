package localdb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/settee/settee/couchdoc"
)

// Clone makes a new store at dst from the store at src (a prebuilt seed):
// the same documents, _local documents and sequences, but a new UUID, so
// the clone has its own replication ids and never shares checkpoint
// documents with the seed or another clone. The seed's UUIDs are recorded
// (Seeds); the replicator uses them to resume the clone's first
// replications from the seed's checkpoints, so a clone's first sync with
// the seed's server is incremental.
//
// src may be open (in this or another process): the copy is one
// consistent snapshot (SQLite's VACUUM INTO), taken without stopping
// writers. A missing src is ErrNotFound; an existing dst is ErrFileExists.
// dst appears whole or not at all.
func Clone(ctx context.Context, src, dst string) error { return CloneKey(ctx, src, dst, nil) }

// CloneKey is Clone for an encrypted store: key is src's (Options.Key),
// and the clone is encrypted with it too. A nil key clones a plain store;
// an encrypted src then is ErrNeedKey.
func CloneKey(ctx context.Context, src, dst string, key []byte) error {
	if _, err := os.Stat(src); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return couchdoc.Errorf(couchdoc.ErrNotFound, "no store at %s", src)
		}
		return fmt.Errorf("clone: %w", err)
	}
	if _, err := os.Stat(dst); err == nil {
		return couchdoc.Errorf(couchdoc.ErrFileExists, "%s already exists", dst)
	}
	tmp := dst + ".clone-tmp"
	os.Remove(tmp)
	defer os.Remove(tmp)
	v, err := openVFS(src, true, &Options{Key: key})
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	vp, into := "", tmp
	if v != nil {
		defer v.Close()
		// The seed's salt, so that a key stretched from a passphrase with
		// it opens the clone too.
		salt, err := StoreSalt(src)
		if err == nil {
			err = v.UseSalt(sqlitePath(tmp), salt)
		}
		if err != nil {
			return fmt.Errorf("clone: %w", err)
		}
		vp = "&vfs=" + v.Name()
		into = fileURI(tmp) + "?vfs=" + v.Name()
	}
	s, err := sql.Open("sqlite", dsn(src, vp))
	if err != nil {
		return fmt.Errorf("clone: open %s: %w", src, err)
	}
	_, err = s.ExecContext(ctx, "VACUUM INTO ?", into)
	s.Close()
	if err != nil {
		return fmt.Errorf("clone: copy %s: %w", src, err)
	}
	if err := reidentify(ctx, tmp, vp); err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	if _, err := os.Stat(dst); err == nil {
		return couchdoc.Errorf(couchdoc.ErrFileExists, "%s already exists", dst)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	return nil
}

// reidentify gives the copy at path a new UUID and puts the old one first
// in its list of seeds.
func reidentify(ctx context.Context, path, vp string) error {
	c, err := sql.Open("sqlite", dsn(path, vp+"&_txlock=immediate"))
	if err != nil {
		return err
	}
	defer c.Close()
	tx, err := c.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var old string
	if err := tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'uuid'").Scan(&old); err != nil {
		return fmt.Errorf("not a Settee store: %w", err)
	}
	seeds, err := readSeeds(ctx, tx)
	if err != nil {
		return err
	}
	b, err := json.Marshal(append([]string{old}, seeds...))
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE meta SET value = ? WHERE key = 'uuid'", newUUID()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('seeds', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", string(b)); err != nil {
		return err
	}
	return tx.Commit()
}

func readSeeds(ctx context.Context, tx *sql.Tx) ([]string, error) {
	var raw string
	err := tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'seeds'").Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var seeds []string
	if err := json.Unmarshal([]byte(raw), &seeds); err != nil {
		return nil, fmt.Errorf("bad seeds %q: %w", raw, err)
	}
	return seeds, nil
}

// Seeds returns the UUIDs of the stores this one was cloned from, the
// nearest first; nil for a store that is not a clone.
func (db *DB) Seeds() []string { return append([]string(nil), db.seeds...) }
