package main

import (
	"context"
	"io"

	"github.com/settee/settee/localdb"
)

var compactHelp = cmdHelp{
	usage: "settee compact LOCAL.db",
	about: `Compact a local store: drop the bodies of old revisions and unreferenced
attachments, then give the free space back to the file system. Prints the
file size before and after, in bytes.`,
	examples: `  settee compact notes.db`,
	exits:    storeExits,
}

func runCompact(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("compact")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, compactHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		before, err := db.Sizes(ctx)
		if err != nil {
			return err
		}
		if err := db.Compact(ctx); err != nil {
			return err
		}
		after, err := db.Sizes(ctx)
		if err != nil {
			return err
		}
		return out.value(struct {
			Before int64 `json:"file_before"`
			After  int64 `json:"file_after"`
		}{before.File, after.File})
	})
}
