package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// openStore opens a local store. Unless create is set (a write, a pull),
// a path that holds no store yet is a not-found error rather than a new
// empty store: a typo or a read must not create a database. Another
// program's file, or a newer store's, is refused and left unchanged.
func openStore(path string, create bool, ks *keySource) (*localdb.DB, error) {
	key, salt, err := ks.options(path)
	if err != nil {
		return nil, err
	}
	db, err := localdb.Open(path, &localdb.Options{NoCreate: !create, Key: key, KeySalt: salt})
	clear(key)
	if errors.Is(err, localdb.ErrNoStore) && errors.Is(err, fs.ErrNotExist) {
		return nil, &exitError{code: exitNotFound, msg: fmt.Sprintf("no local store at %s (check the path; settee pull, sync, put, attachment put and import create one)", path), err: err}
	}
	if errors.Is(err, localdb.ErrNoStore) || errors.Is(err, fs.ErrNotExist) {
		return nil, &exitError{code: exitNotFound, err: err}
	}
	return db, err
}

// maxJSONArg bounds a JSON argument read from stdin or a file: the
// server's default request body limit (64 MiB), so that what put accepts
// a default server accepts too. A variable for tests.
var maxJSONArg int64 = 64 << 20

// readJSONArg reads a JSON argument: literal JSON, "-" for stdin, or
// "@file" for a file's contents; stdin and files are refused beyond
// maxJSONArg with a message naming the limit.
func readJSONArg(arg string, stdin io.Reader) ([]byte, error) {
	var r io.Reader
	from := "stdin"
	switch {
	case arg == "-":
		r = stdin
	case strings.HasPrefix(arg, "@"):
		from = arg[1:]
		f, err := os.Open(from)
		if err != nil {
			return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("read %s: %v", from, errors.Unwrap(err)), err: err}
		}
		defer f.Close()
		r = f
	default:
		return []byte(arg), checkJSON([]byte(arg), "the argument", arg)
	}
	b, err := io.ReadAll(io.LimitReader(r, maxJSONArg+1))
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: fmt.Sprintf("read %s: %v", from, err), err: err}
	}
	if int64(len(b)) > maxJSONArg {
		return nil, usageErrorf("the JSON from %s is larger than the %d MiB limit", from, maxJSONArg>>20)
	}
	return b, checkJSON(b, from, "")
}

// checkJSON refuses b unless it is one JSON value, with one message for
// every command: where (line and column) and why. literal is the argument
// when b is one: an argument that does not start like JSON is likely a
// file name missing its @.
func checkJSON(b []byte, from, literal string) error {
	if json.Valid(b) {
		return nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if err == nil || !errors.As(err, &se) {
		return usageErrorf("invalid JSON in %s", from)
	}
	off := min(int(se.Offset), len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(b[:off], '\n')
	if off > 0 && col > 1 {
		col-- // the offset is past the character that did not fit
	}
	hint := ""
	if t := strings.TrimSpace(literal); t != "" && !strings.ContainsAny(t[:1], "{[\"-0123456789tfn") {
		hint = fmt.Sprintf(" (to read a file, write @%s; - reads stdin)", literal)
	}
	return usageErrorf("invalid JSON in %s at line %d, column %d: %s%s", from, line, col, strings.TrimPrefix(se.Error(), "json: "), hint)
}

// checkRev refuses a malformed revision given in flag (exit 2), before
// any store is opened. _local documents have their own revisions.
func checkRev(flag, rev, id string) error {
	if rev == "" || couchdoc.IsLocalID(id) {
		return nil
	}
	if _, _, err := couchdoc.ParseRev(rev); err != nil {
		return usageErrorf("%s %q is not a revision (expected N-ID, such as 2-9b1e...)", flag, rev)
	}
	return nil
}

// writeLine prints v as compact JSON on one line: the replication events
// of --json, which are a feed for scripts whatever stdout is.
func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// docJSON encodes a document as CouchDB sends it.
func docJSON(doc *couchdoc.Doc) (json.RawMessage, error) {
	return doc.MarshalJSON()
}

// withStore opens the store at path (openStore's rules for create), runs
// fn on it and closes it, returning fn's error or else the close's: the
// one way a subcommand opens its store.
func withStore(path string, create bool, ks *keySource, fn func(db *localdb.DB) error) (err error) {
	db, err := openStore(path, create, ks)
	if err != nil {
		return err
	}
	defer closeStore(db, &err)
	return fn(db)
}

// closeStore closes db, keeping the first error.
func closeStore(db *localdb.DB, err *error) {
	if cerr := db.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close %s: %w", db.Path(), cerr)
	}
}
