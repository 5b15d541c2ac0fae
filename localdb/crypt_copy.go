package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/cryptvfs"
)

// Encrypt writes a copy of the plain store at src, encrypted with key, to
// dst, which must not exist (ErrFileExists). salt, when not nil, goes in
// dst's header (Options.KeySalt). src may be open elsewhere: the copy is
// one consistent snapshot. dst appears whole or not at all.
func Encrypt(ctx context.Context, src, dst string, key, salt []byte) error {
	if err := needKey(key); err != nil {
		return err
	}
	return copyStore(ctx, src, nil, dst, key, salt)
}

// Decrypt writes a plain copy of the store at src, encrypted with key, to
// dst, which must not exist. dst appears whole or not at all.
func Decrypt(ctx context.Context, src, dst string, key []byte) error {
	if err := needKey(key); err != nil {
		return err
	}
	return copyStore(ctx, src, key, dst, nil, nil)
}

// Rekey encrypts the store at path with newKey instead of oldKey (and
// newSalt in its header, when not nil). It needs the store to itself (no
// other connection, in any process): it writes the re-encrypted copy
// beside it, syncs it and renames it over the store, so a crash at any
// moment leaves the old store or the new one, whole.
func Rekey(ctx context.Context, path string, oldKey, newKey, newSalt []byte) error {
	if err := needKey(oldKey); err != nil {
		return err
	}
	if err := needKey(newKey); err != nil {
		return err
	}
	return copyStore(ctx, path, oldKey, path, newKey, newSalt)
}

func needKey(key []byte) error {
	if len(key) != KeySize {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "localdb: the key is %d bytes, want %d", len(key), KeySize)
	}
	return nil
}

// copyStore copies the store src (read with srcKey) to dst (encrypted
// with dstKey, or plain) through a temporary file beside dst. When src
// and dst are the same file, src is first put out of WAL mode under an
// exclusive lock, which it keeps until the copy has replaced it.
func copyStore(ctx context.Context, src string, srcKey []byte, dst string, dstKey, dstSalt []byte) (err error) {
	inPlace := src == dst
	exists, err := checkPath(src, true)
	if err != nil {
		return err
	}
	if !exists {
		return &OpenError{src, "is an empty file, not a Settee store", ErrNoStore}
	}
	if !inPlace {
		if _, err := os.Stat(dst); err == nil {
			return couchdoc.Errorf(couchdoc.ErrFileExists, "%s already exists", dst)
		}
	}
	sv, err := openVFS(src, true, &Options{Key: srcKey})
	if err != nil {
		return err
	}
	if sv != nil {
		defer sv.Close()
	}
	if srcKey == nil && sv != nil {
		return &OpenError{src, "is already encrypted", ErrPlainStore}
	}
	tmp := dst + ".crypt-tmp"
	os.Remove(tmp)
	defer os.Remove(tmp)
	into := fileURI(tmp) + "?vfs=" + cryptvfs.DefaultName() + "&reserve=0"
	if dstKey != nil {
		dv, err := cryptvfs.New(dstKey, pageSize)
		if err != nil {
			return err
		}
		defer dv.Close()
		if dstSalt != nil {
			if err := dv.UseSalt(sqlitePath(tmp), dstSalt); err != nil {
				return err
			}
		}
		into = fileURI(tmp) + "?vfs=" + dv.Name() + "&reserve=" + strconv.Itoa(cryptvfs.Reserve)
	}
	vp := ""
	if sv != nil {
		vp = "&vfs=" + sv.Name()
	}
	c, err := sql.Open("sqlite", dsn(src, vp))
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer c.Close()
	c.SetMaxOpenConns(1)
	conn, err := c.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer conn.Close()
	if inPlace {
		// Out of WAL mode (a WAL beside the new file would be replayed
		// into it), and locked until the rename.
		for _, q := range []string{"PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA journal_mode = DELETE", "PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE", "COMMIT"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("%s: take the store for itself (is it open elsewhere?): %w", src, err)
			}
		}
	}
	for _, q := range []string{"PRAGMA page_size = " + strconv.Itoa(pageSize), "VACUUM INTO ?"} {
		var args []any
		if q == "VACUUM INTO ?" {
			args = []any{into}
		}
		if _, err := conn.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("copy %s: %w", src, err)
		}
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if !inPlace {
		if _, err := os.Stat(dst); err == nil {
			return couchdoc.Errorf(couchdoc.ErrFileExists, "%s already exists", dst)
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	return syncFile(filepath.Dir(dst))
}

// syncFile flushes a file or a folder to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
