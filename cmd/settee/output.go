package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"

	"github.com/settee/settee/couchdoc"
)

// outputHelp is the one rule every command prints its results by.
const outputHelp = `Results are JSON on stdout: indented on a terminal, one compact line per
value when piped or redirected. --json forces the compact form, --pretty the
indented one.`

// output prints a command's results by outputHelp's rule.
type output struct {
	w      io.Writer
	json   bool // --json
	pretty bool // --pretty
}

// outputFlags registers --json and --pretty on fs for results written to w.
func outputFlags(fs *flag.FlagSet, w io.Writer) *output {
	o := &output{w: w}
	fs.BoolVar(&o.json, "json", false, "print each result as compact JSON on one line (the default when stdout is not a terminal)")
	fs.BoolVar(&o.pretty, "pretty", false, "print each result as indented JSON (the default on a terminal)")
	return o
}

// check refuses --json with --pretty.
func (o *output) check() error {
	if o.json && o.pretty {
		return usageErrorf("--json and --pretty exclude each other")
	}
	return nil
}

// indent reports whether results are indented.
func (o *output) indent() bool { return o.pretty || !o.json && isTerminal(o.w) }

// value prints v as JSON and a newline.
func (o *output) value(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return o.raw(b)
}

// raw prints encoded JSON and a newline.
func (o *output) raw(b []byte) error {
	var out bytes.Buffer
	var err error
	if o.indent() {
		err = json.Indent(&out, b, "", "  ")
	} else {
		err = json.Compact(&out, b)
	}
	if err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = o.w.Write(out.Bytes())
	return err
}

// doc prints a document as CouchDB sends it.
func (o *output) doc(d *couchdoc.Doc) error {
	b, err := d.MarshalJSON()
	if err != nil {
		return err
	}
	return o.raw(b)
}
