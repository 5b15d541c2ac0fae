package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/cryptvfs"
)

// KeySize is the size of an encryption key (Options.Key).
const KeySize = 32

// The errors of encrypted stores (Options.Key).
var (
	// ErrWrongKey: the store is encrypted with another key.
	ErrWrongKey = errors.New("localdb: wrong key for this encrypted store")
	// ErrNeedKey: the store is encrypted and no key was given.
	ErrNeedKey = errors.New("localdb: the store is encrypted: open it with its key")
	// ErrPlainStore: a key was given for a store that is not encrypted.
	ErrPlainStore = errors.New("localdb: the store is not encrypted, but a key was given")
	// ErrAuthFailed: a page of an encrypted store failed authentication:
	// the file was damaged, or changed by something other than Settee.
	ErrAuthFailed = errors.New("localdb: failed authentication")
)

// AuthError reports a read of an encrypted store that failed
// authentication. It matches ErrAuthFailed.
type AuthError struct {
	Path string
	What string // "page 12", "a page in its WAL", "its header"
}

func (e *AuthError) Error() string {
	return e.Path + ": " + e.What + " failed authentication: the file is damaged or was changed outside Settee"
}

func (e *AuthError) Unwrap() error { return ErrAuthFailed }

// testKey, set by the package's own tests when SETTEE_TEST_ENCRYPT=1
// (export_test.go), is the key of every store opened without one, so
// that the whole suite also runs on encrypted stores.
var testKey []byte

// openVFS checks the key against the file's header and registers the
// VFS that reads the store with it (nil for a plain store), making the
// store first when the file is missing or empty (exists false).
func openVFS(path string, exists bool, opts *Options) (*cryptvfs.VFS, error) {
	if opts.Key == nil && testKey != nil {
		o := *opts
		o.Key = testKey
		opts = &o
	}
	var h []byte
	if exists {
		var err error
		if h, err = readHeader(path); err != nil {
			return nil, pathError(path, err)
		}
	}
	if opts.Key == nil {
		if cryptvfs.IsEncrypted(h) {
			return nil, &OpenError{path, "is encrypted: open it with its key", ErrNeedKey}
		}
		return nil, nil
	}
	if len(opts.Key) != KeySize {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "localdb: the key is %d bytes, want %d", len(opts.Key), KeySize)
	}
	v, err := cryptvfs.New(opts.Key, pageSize)
	if err != nil {
		return nil, err
	}
	switch {
	case exists:
		err = v.CheckHeader(h)
	case opts.KeySalt != nil:
		if err = v.UseSalt(sqlitePath(path), opts.KeySalt); err == nil {
			err = v.Create(path, "PRAGMA auto_vacuum = INCREMENTAL", "PRAGMA journal_mode = WAL")
		}
	default:
		err = v.Create(path, "PRAGMA auto_vacuum = INCREMENTAL", "PRAGMA journal_mode = WAL")
	}
	if errors.Is(err, cryptvfs.ErrPlain) {
		// Another program's SQLite file is refused as such.
		if oerr := plainOwner(path); oerr != nil {
			err = oerr
		}
	}
	if err != nil {
		v.Close()
		return nil, keyError(path, err)
	}
	return v, nil
}

// plainOwner is checkOwner's error for a plain SQLite file, nil for a
// plain Settee store.
func plainOwner(path string) error {
	c, err := sql.Open("sqlite", dsn(path, "&_pragma=query_only(1)"))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = checkOwner(context.Background(), c, path, true)
	if errors.Is(err, ErrNotStore) {
		return err
	}
	return nil
}

// keyError turns the VFS's verdict on a header into the store's error.
func keyError(path string, err error) error {
	var oe *OpenError
	switch {
	case errors.As(err, &oe):
		return err
	case errors.Is(err, cryptvfs.ErrPlain):
		return &OpenError{path, "is not encrypted: open it without a key, or encrypt it first (settee encrypt)", ErrPlainStore}
	case errors.Is(err, cryptvfs.ErrWrongKey):
		return &OpenError{path, "is encrypted with another key", ErrWrongKey}
	case errors.Is(err, cryptvfs.ErrNotOurs):
		return &OpenError{path, "is not a SQLite database", ErrNotStore}
	}
	return &OpenError{path, "cannot make an encrypted store: " + err.Error(), err}
}

// StoreSalt returns the salt in the header of the encrypted store at path
// (for a key stretched from a passphrase with it), nil when the file is
// missing or empty, and an *OpenError matching ErrPlainStore for a plain
// store or ErrNotStore for another file.
func StoreSalt(path string) ([]byte, error) {
	h, err := readHeader(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(h) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, pathError(path, err)
	}
	salt, err := cryptvfs.Salt(h)
	if err != nil {
		return nil, keyError(path, err)
	}
	return salt, nil
}

// sqlitePath is path as SQLite names the file it opens: absolute, with
// the symbolic links of its folder resolved.
func sqlitePath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// readHeader reads the first bytes of a file (fewer if it is shorter).
func readHeader(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := make([]byte, cryptvfs.HeaderSize)
	n, err := io.ReadFull(f, h)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return h[:n], nil
}

// vfsParam is the DSN parameter that reads the store through its VFS.
func (db *DB) vfsParam() string {
	if db.vfs == nil {
		return ""
	}
	return "&vfs=" + db.vfs.Name()
}

// authErr names the store and the page when err is an encrypted page
// that failed authentication.
func (db *DB) authErr(err error) error {
	if err == nil || db.vfs == nil {
		return err
	}
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_IOERR {
		return err
	}
	// SQLite keeps IOERR_DATA's extended code on most paths, not all
	// (page 1's header read): any I/O error after a failure counts.
	f := db.vfs.Failure()
	if se.Code() != sqlite3.SQLITE_IOERR_DATA && f == nil {
		return err
	}
	what := "a page"
	if f != nil {
		what = f.What
	}
	return errors.Join(&AuthError{Path: db.path, What: what}, err)
}

// IntegrityCheck runs SQLite's integrity check over the whole file (every
// page is read, so on an encrypted store every page is authenticated) and
// returns its findings: ["ok"] for a sound file.
func (db *DB) IntegrityCheck(ctx context.Context) ([]string, error) {
	var out []string
	var before *cryptvfs.Failure
	if db.vfs != nil {
		before = db.vfs.Failure()
	}
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "PRAGMA integrity_check")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out = append(out, strings.Split(strings.TrimSpace(s), "\n")...)
		}
		return rows.Err()
	})
	// The check reports a page it cannot read among its findings.
	if err == nil && db.vfs != nil {
		if f := db.vfs.Failure(); f != before {
			err = &AuthError{Path: db.path, What: f.What}
		}
	}
	return out, err
}

// SideFileDSN readies path, a SQLite file beside the store that holds data
// derived from its documents (a view index), and returns the parameters
// its DSN must add: for an encrypted store the file is made encrypted
// with the store's key when it is missing or empty, and read through the
// store's VFS ("&vfs=..."); for a plain store, "". A connection to it must
// be closed before the store is.
func (db *DB) SideFileDSN(path string) (string, error) {
	if db.vfs == nil {
		return "", nil
	}
	st, err := os.Stat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err != nil || st.Size() == 0 {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := db.vfs.Create(path, "PRAGMA journal_mode = WAL"); err != nil {
			return "", fmt.Errorf("make %s: %w", path, err)
		}
	}
	return "&vfs=" + db.vfs.Name(), nil
}
