package main

import (
	"context"
	"io"

	"github.com/settee/settee/localdb"
)

var cloneHelp = cmdHelp{
	usage: "settee clone SEED.db NEW.db",
	about: `Make a new local store from a prebuilt seed store: the same documents and
checkpoints, but a UUID of its own, so each device has its own replication
ids while its first sync with the seed's server resumes where the seed left
off (only what changed since is fetched). The seed may be in use. NEW.db
must not exist. Prints {"path","uuid","seeds"} of the new store (its seeds:
the UUIDs whose checkpoints it took over). Copy a store this way (or
with the mobile openCopy), never with cp: a copied file keeps the seed's
UUID and shares its checkpoints.`,
	examples: `  settee clone prebuilt.db device1.db`,
	exits:    storeExits,
}

func runClone(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("clone")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, cloneHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	key, _, err := ks.options(pos[0])
	if err != nil {
		return err
	}
	if err := localdb.CloneKey(ctx, pos[0], pos[1], key); err != nil {
		return err
	}
	return withStore(pos[1], false, ks, func(db *localdb.DB) error {
		return out.value(struct {
			Path  string   `json:"path"`
			UUID  string   `json:"uuid"`
			Seeds []string `json:"seeds"`
		}{db.Path(), db.UUID(), db.Seeds()})
	})
}
