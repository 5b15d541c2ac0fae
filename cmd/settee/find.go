package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

var findHelp = cmdHelp{
	usage: "settee find [flags] LOCAL.db QUERY",
	about: `Run a Mango query (CouchDB's _find) on a local store and print the answer:
{"docs": [...], "bookmark": "...", "warning": "..."}. QUERY is the _find
body as literal JSON, "-" for stdin or @FILE: "selector" (required), "fields",
"sort", "limit" (25 by default), "skip", "bookmark" (from the previous
answer, for the next page), "use_index", "execution_stats".
A sort needs a json index on its fields ("settee index create"), as in
CouchDB. With --explain, print the plan instead: the index and key range.`,
	examples: `  settee find shop.db '{"selector": {"type": "order", "customer": "c1"}}'
  settee find shop.db '{"selector": {"customer": "c1", "when": {"$gt": 0}}, "sort": [{"customer": "desc"}, {"when": "desc"}], "limit": 20}'
  settee find shop.db @query.json --explain`,
	exits: storeExits,
}

func runFind(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("find")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	explain := fs.Bool("explain", false, "print the query plan (CouchDB's _explain) instead of running it")
	pos, err := parseFlags(fs, findHelp, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	body, err := readJSONArg(pos[1], os.Stdin)
	if err != nil {
		return fmt.Errorf("read query: %w", err)
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		if *explain {
			ex, err := query.Explain(ctx, db, pos[0], body)
			if err != nil {
				return fmt.Errorf("explain: %w", err)
			}
			return out.value(ex)
		}
		res, err := query.Find(ctx, db, body)
		if err != nil {
			return fmt.Errorf("find: %w", err)
		}
		return out.value(res)
	})
}
