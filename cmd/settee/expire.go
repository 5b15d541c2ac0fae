package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/settee/settee/localdb"
)

var expireHelp = cmdHelp{
	usage: "settee expire [flags] LOCAL.db ID",
	about: `Set, clear or show when a document of a local store expires. An expired
document is purged by the store itself (while open, or when next opened).
The expiration is local to this store: it is not part of the document and
never replicated. Without a flag, prints the current one. Prints
{"id":...,"expires":RFC3339 or null}.`,
	examples: `  settee expire notes.db draft --in 24h
  settee expire notes.db draft --at 2027-01-01T00:00:00Z
  settee expire notes.db draft --clear`,
	exits: storeExits,
}

func runExpire(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("expire")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	in := fs.Duration("in", 0, "expire after this `duration` from now")
	at := fs.String("at", "", "expire at this `time` (RFC 3339)")
	clear := fs.Bool("clear", false, "remove the expiration")
	pos, err := parseFlags(fs, expireHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	set := 0
	for _, b := range []bool{*in != 0, *at != "", *clear} {
		if b {
			set++
		}
	}
	if set > 1 {
		return usageErrorf("expire: give one of --in, --at, --clear")
	}
	var when time.Time
	switch {
	case *in < 0:
		return usageErrorf("expire: --in must be positive")
	case *in > 0:
		when = time.Now().Add(*in)
	case *at != "":
		if when, err = time.Parse(time.RFC3339, *at); err != nil {
			return usageErrorf("expire: --at: %v", err)
		}
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		id := pos[1]
		if set == 1 {
			if err := db.SetExpiration(ctx, id, when); err != nil {
				return err
			}
		} else if _, err := db.Get(ctx, id, localdb.GetOptions{}); err != nil {
			return fmt.Errorf("expire %s: %w", id, err)
		}
		cur, err := db.Expiration(ctx, id)
		if err != nil {
			return err
		}
		var expires *string
		if !cur.IsZero() {
			s := cur.UTC().Format(time.RFC3339Nano)
			expires = &s
		}
		return out.value(struct {
			ID      string  `json:"id"`
			Expires *string `json:"expires"`
		}{id, expires})
	})
}
