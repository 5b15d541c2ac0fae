package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	gosync "sync"
)

// openStores counts the DBs open in this process, by file (storeKey).
var openStores = struct {
	gosync.Mutex
	n map[string]int
}{n: map[string]int{}}

// storeKey names a store file the same way whichever path reaches it.
func storeKey(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func noteOpen(key string, delta int) {
	openStores.Lock()
	defer openStores.Unlock()
	openStores.n[key] += delta
	if openStores.n[key] <= 0 {
		delete(openStores.n, key)
	}
}

// sideSuffixes are the files SQLite and Settee keep beside a store.
var sideSuffixes = []string{"-wal", "-shm", "-journal", ".clone-tmp", ".clone-tmp-wal", ".clone-tmp-shm", ".clone-tmp-journal"}

// Exists reports whether path holds a Settee store (a missing or empty
// file does not). Another program's file is an *OpenError matching
// ErrNotStore. It reads the file's header and schema only.
func Exists(ctx context.Context, path string) (bool, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, pathError(path, err)
	case st.IsDir() || !st.Mode().IsRegular():
		return false, &OpenError{path, "is not a regular file", ErrNotStore}
	case st.Size() == 0:
		return false, nil
	}
	c, err := sql.Open("sqlite", dsn(path, "&_pragma=query_only(1)"))
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer c.Close()
	if _, err := checkOwner(ctx, c, path, true); err != nil && !errors.Is(err, ErrNewerStore) && !errors.Is(err, ErrNeedKey) {
		if errors.Is(err, ErrNoStore) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Remove deletes the Settee store at path with the files SQLite keeps
// beside it (-wal, -shm, -journal) and an interrupted Clone's leftovers.
// It refuses a store open in this process (ErrStoreOpen; another
// process's use it cannot see), a missing store (an *OpenError matching
// fs.ErrNotExist) and another program's file (ErrNotStore), changing
// nothing.
func Remove(ctx context.Context, path string) error {
	openStores.Lock()
	defer openStores.Unlock() // no Open of this path completes meanwhile
	if openStores.n[storeKey(path)] > 0 {
		return &OpenError{path, "is open in this process: close it first", ErrStoreOpen}
	}
	ok, err := Exists(ctx, path)
	if err != nil {
		return err
	}
	if !ok {
		if _, serr := os.Stat(path); serr != nil {
			return &OpenError{path, "no such file", fs.ErrNotExist}
		}
		// An empty file is a store not yet made: removed as well.
	}
	// The main file goes last: a crash half way leaves a store SQLite
	// can still open, never side files that a new store would adopt.
	for _, s := range sideSuffixes {
		if err := os.Remove(path + s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return pathError(path+s, err)
		}
	}
	if err := os.Remove(path); err != nil {
		return pathError(path, err)
	}
	return nil
}
