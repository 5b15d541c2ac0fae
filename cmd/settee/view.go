package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/filter"
	"github.com/settee/settee/localdb/query"
)

var viewHelp = cmdHelp{
	usage: "settee view [flags] LOCAL.db DDOC/VIEW [OPTIONS]",
	about: `Query a JavaScript map/reduce view of a design document (CouchDB's
_design/DDOC/_view/VIEW) and print CouchDB's answer: {"total_rows", "offset",
"rows": [{"id", "key", "value"}]}, or a reduction's {"rows": [{"key",
"value"}]}. OPTIONS is a JSON object of _view's query options (literal, "-"
for stdin or @FILE): "key", "keys", "startkey", "endkey", "inclusive_end",
"descending", "skip", "limit", "reduce", "group", "group_level",
"include_docs", "conflicts", "update" ("false" answers from the stored
rows), "update_seq". The view is brought up to date first.`,
	examples: `  settee view shop.db orders/by_customer '{"key": "c1", "include_docs": true}'
  settee view shop.db orders/total_by_day '{"group_level": 1}'`,
	exits: storeExits,
}

func runView(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flagSet("view")
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, viewHelp, args, 2, 3, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	ddoc, view, ok := filter.Split(pos[1])
	if !ok {
		return usageErrorf("%q: name the view as DDOC/VIEW", pos[1])
	}
	var body []byte
	if len(pos) == 3 {
		if body, err = readJSONArg(pos[2], os.Stdin); err != nil {
			return fmt.Errorf("read options: %w", err)
		}
	}
	opts, err := query.ViewOptionsFromJSON(body)
	if err != nil {
		return fmt.Errorf("view options: %w", err)
	}
	return withStore(pos[0], false, ks, func(db *localdb.DB) error {
		res, err := query.View(ctx, db, ddoc, view, opts)
		if err != nil {
			return fmt.Errorf("view %s/%s: %w", ddoc, view, err)
		}
		return out.value(res)
	})
}
