package localdb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/settee/settee/localdb/migrations"
)

// migration is one numbered schema step.
type migration struct {
	version int
	sql     string
}

func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", name)
		}
		b, err := migrations.FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations are not numbered 1..n (found %d at %d)", m.version, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this code writes.
func SchemaVersion() int {
	ms, _ := loadMigrations()
	return len(ms)
}

// migrate applies the missing migrations in one transaction and records the
// version in PRAGMA user_version.
func migrate(ctx context.Context, db *sql.DB) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(ms) {
		return fmt.Errorf("schema version %d is newer than this Settee supports (%d): upgrade Settee: %w", v, len(ms), ErrNewerStore)
	}
	var appID int
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return fmt.Errorf("read application_id: %w", err)
	}
	if v == len(ms) && appID == ApplicationID {
		return nil
	}
	if appID != ApplicationID { // a new store, or one made before they were marked
		if _, err := tx.ExecContext(ctx, "PRAGMA application_id = "+strconv.Itoa(ApplicationID)); err != nil {
			return fmt.Errorf("mark the store: %w", err)
		}
	}
	for _, m := range ms[v:] {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %d: %w", m.version, err)
		}
		if step := goSteps[m.version]; step != nil && v > 0 {
			// A new file has nothing to rewrite.
			if err := step(ctx, tx); err != nil {
				return fmt.Errorf("migration %d: %w", m.version, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(len(ms))); err != nil {
		return err
	}
	return tx.Commit()
}
