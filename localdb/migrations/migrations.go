// Package migrations embeds the store's schema as numbered SQL files
// (0001_init.sql, ...). File N brings the schema from version N-1 to N.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS
