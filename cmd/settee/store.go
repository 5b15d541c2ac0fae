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
func openStore(path string, create bool) (*localdb.DB, error) {
	db, err := localdb.Open(path, &localdb.Options{NoCreate: !create})
	if errors.Is(err, localdb.ErrNoStore) && errors.Is(err, fs.ErrNotExist) {
		return nil, &exitError{code: exitNotFound, msg: fmt.Sprintf("no local store at %s", path), err: err}
	}
	if errors.Is(err, localdb.ErrNoStore) || errors.Is(err, fs.ErrNotExist) {
		return nil, &exitError{code: exitNotFound, err: err}
	}
	return db, err
}

// readJSONArg reads a JSON argument: literal JSON, "-" for stdin, or
// "@file" for a file's contents.
func readJSONArg(arg string, stdin io.Reader) ([]byte, error) {
	switch {
	case arg == "-":
		return io.ReadAll(io.LimitReader(stdin, 64<<20))
	case strings.HasPrefix(arg, "@"):
		return os.ReadFile(arg[1:])
	}
	return []byte(arg), nil
}

// writeJSON prints v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeRawJSON(w, b)
}

func writeRawJSON(w io.Writer, b []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
}

// writeLine prints v as compact JSON on one line (for feeds and scripts).
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

// closeStore closes db, keeping the first error.
func closeStore(db *localdb.DB, err *error) {
	if cerr := db.Close(); cerr != nil && *err == nil {
		*err = fmt.Errorf("close %s: %w", db.Path(), cerr)
	}
}
