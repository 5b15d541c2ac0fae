package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"modernc.org/sqlite"

	"github.com/settee/settee/localdb/internal/cryptvfs"
)

// sqliteNotADB is SQLITE_NOTADB: the file is not a SQLite database.
const sqliteNotADB = 26

// ApplicationID is the PRAGMA application_id that marks a SQLite file as
// a Settee store ("SETT").
const ApplicationID = 0x53455454

// OpenError is why Open refused a path: the path, what is wrong with it
// in a few words, and the cause to match with errors.Is (ErrNoStore,
// ErrNotStore, ErrNewerStore, fs.ErrNotExist, fs.ErrPermission, ...). The
// file is left as it was.
type OpenError struct {
	Path   string
	Reason string
	Err    error
}

func (e *OpenError) Error() string { return e.Path + ": " + e.Reason }

func (e *OpenError) Unwrap() error { return e.Err }

// checkPath says what is wrong with path before SQLite tries it, in the
// words a user needs ("directory /x does not exist"). exists reports a
// non-empty file.
func checkPath(path string, noCreate bool) (exists bool, err error) {
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return false, &OpenError{path, "is a directory", ErrNotStore}
	case err == nil && !st.Mode().IsRegular():
		return false, &OpenError{path, "is not a regular file", ErrNotStore}
	case err == nil:
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return false, pathError(path, err)
		}
		f.Close()
		if st.Size() == 0 && noCreate {
			return false, &OpenError{path, "is an empty file, not a Settee store", ErrNoStore}
		}
		return st.Size() > 0, nil
	case !errors.Is(err, fs.ErrNotExist):
		return false, pathError(path, err)
	}
	dir := filepath.Dir(path)
	if st, derr := os.Stat(dir); derr != nil {
		if errors.Is(derr, fs.ErrNotExist) {
			return false, &OpenError{path, "directory " + dir + " does not exist", fs.ErrNotExist}
		}
		return false, pathError(dir, derr)
	} else if !st.IsDir() {
		return false, &OpenError{path, dir + " is not a directory", fs.ErrNotExist}
	}
	if noCreate {
		return false, &OpenError{path, "no such file", errors.Join(ErrNoStore, fs.ErrNotExist)}
	}
	return false, nil
}

func pathError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return &OpenError{path, "permission denied", fs.ErrPermission}
	case errors.Is(err, fs.ErrNotExist):
		return &OpenError{path, "no such file or directory", fs.ErrNotExist}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &OpenError{path, pe.Err.Error(), err}
	}
	return &OpenError{path, err.Error(), err}
}

// checkOwner reads the file's header and schema (changing nothing) and
// refuses a file that is not a Settee store or is newer than this code.
// fresh reports an empty database, to be initialised.
func checkOwner(ctx context.Context, c *sql.DB, path string, noCreate bool) (fresh bool, err error) {
	var appID, version, tables, ours int
	err = c.QueryRowContext(ctx, `SELECT
		(SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_master),
		(SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'docs', 'revs'))`).
		Scan(&appID, &version, &tables, &ours)
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code()&0xff == sqliteNotADB {
			if h, _ := readHeader(path); cryptvfs.IsEncrypted(h) {
				return false, &OpenError{path, "is encrypted: open it with its key", ErrNeedKey}
			}
			return false, &OpenError{path, "is not a SQLite database", ErrNotStore}
		}
		return false, &OpenError{path, "cannot read it: " + err.Error(), err}
	}
	switch {
	case appID == 0 && version == 0 && tables == 0:
		if noCreate {
			return false, &OpenError{path, "is an empty SQLite database, not a Settee store", ErrNoStore}
		}
		return true, nil
	case appID != ApplicationID && (appID != 0 || ours != 3 || version == 0):
		// appID 0 with our three tables and a schema version is a store
		// made before stores were marked.
		return false, &OpenError{path, fmt.Sprintf("is another program's SQLite database (application_id %#x, %d schema objects), not a Settee store", appID, tables), ErrNotStore}
	case version > SchemaVersion():
		return false, &OpenError{path, fmt.Sprintf("has schema version %d, newer than this Settee supports (%d): upgrade Settee", version, SchemaVersion()), ErrNewerStore}
	}
	return false, nil
}
