package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

var indexHelp = cmdHelp{
	usage: "settee index create LOCAL.db INDEX | list LOCAL.db | delete LOCAL.db DDOC NAME",
	about: `Manage the Mango json indexes of a local store, as CouchDB's _index.
create takes the POST /{db}/_index body (literal JSON, "-" or @FILE):
{"index": {"fields": [...], "partial_filter_selector": {...}}, "ddoc", "name"}
and prints {"result": "created"|"exists", "id", "name"}; the index is built
before it returns. An index is a design document with "language": "query",
so it replicates to and from CouchDB. list prints every index, _all_docs
first; delete removes one (and its design document when it was the last).`,
	examples: `  settee index create shop.db '{"index": {"fields": ["customer", "when"]}, "ddoc": "orders", "name": "by-customer"}'
  settee index list shop.db
  settee index delete shop.db orders by-customer`,
	exits: storeExits,
}

func runIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("index")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, indexHelp, args, 2, 4, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	want := map[string]int{"create": 3, "list": 2, "delete": 4}
	if n, ok := want[pos[0]]; !ok || n != len(pos) {
		return usageErrorf("usage: %s", indexHelp.usage)
	}
	var body []byte
	if pos[0] == "create" {
		if body, err = readJSONArg(pos[2], os.Stdin); err != nil {
			return fmt.Errorf("read index: %w", err)
		}
	}
	return withStore(pos[1], false, ks, func(db *localdb.DB) error {
		switch pos[0] {
		case "create":
			res, err := query.CreateIndex(ctx, db, body)
			if err != nil {
				return fmt.Errorf("create index: %w", err)
			}
			return out.value(res)
		case "list":
			return out.value(query.ListIndexes(db))
		}
		if err := query.DeleteIndex(ctx, db, pos[2], pos[3]); err != nil {
			return fmt.Errorf("delete index: %w", err)
		}
		return out.value(map[string]bool{"ok": true})
	})
}
