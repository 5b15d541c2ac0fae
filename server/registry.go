package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	gosync "sync"
	"sync/atomic"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	mango "github.com/settee/settee/localdb/query"
)

// dbFileExts are the extensions of the store files of a DataDir, in the
// order a name's file is looked for; the first is given to new databases.
var dbFileExts = []string{".db", ".sqlite"}

// errNoDB is CouchDB's answer for a missing database.
var errNoDB = couchdoc.Errorf(couchdoc.ErrNotFound, "Database does not exist.")

// registry opens databases on first use and keeps them open.
type registry struct {
	cfg Config
	mu  gosync.Mutex
	dbs map[string]*localdb.DB
	// stopped is set by closeAll: a database closed under a request was
	// closed by the server's stop, not by DELETE /{db}.
	stopped atomic.Bool
	// aliases maps the name of a DataDir's file whose own name CouchDB
	// refuses to that file (NameOfFile); notes say which (FileNotes).
	aliases map[string]string
	notes   []FileNote
}

func newRegistry(cfg Config) *registry {
	return &registry{cfg: cfg, dbs: map[string]*localdb.DB{}}
}

// validateDBName checks a database name as CouchDB does.
func validateDBName(name string) error {
	if systemDBs[name] {
		return nil
	}
	ok := name != "" && len(name) <= 238 && name[0] >= 'a' && name[0] <= 'z'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_$()+-/", c) >= 0
	}
	if !ok {
		return &couchdoc.Error{Status: 400, Name: "illegal_database_name",
			Reason: fmt.Sprintf("Name: '%s'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.", name)}
	}
	return nil
}

// file returns the SQLite file of a database: in a DataDir, NAME.db or
// else NAME.sqlite if that one exists.
func (g *registry) file(name string) string {
	if g.cfg.DBPath != "" {
		return g.cfg.DBPath
	}
	if f, ok := g.aliases[name]; ok {
		return filepath.Join(g.cfg.DataDir, f)
	}
	base := filepath.Join(g.cfg.DataDir, strings.ReplaceAll(name, "/", "%2F"))
	for _, ext := range dbFileExts[1:] {
		if _, err := os.Stat(base + dbFileExts[0]); err == nil {
			break
		}
		if _, err := os.Stat(base + ext); err == nil {
			return base + ext
		}
	}
	return base + dbFileExts[0]
}

// get returns an existing database, opening it if needed; errNoDB if it
// does not exist.
func (g *registry) get(ctx context.Context, name string) (*localdb.DB, error) {
	if err := validateDBName(name); err != nil {
		return nil, err
	}
	if g.cfg.DBPath != "" && name != g.cfg.DBName {
		return nil, errNoDB
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if db, ok := g.dbs[name]; ok {
		return db, nil
	}
	if g.cfg.DataDir != "" {
		if _, err := os.Stat(g.file(name)); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, errNoDB
			}
			return nil, fmt.Errorf("open database %s: %w", name, err)
		}
	}
	return g.openLocked(name, false)
}

// openLocked opens a database's file. create lets Open make the store in
// the empty file create just made, whatever DBOptions.NoCreate says: that
// option guards the stores found on disk, never a PUT /{db}.
func (g *registry) openLocked(name string, create bool) (*localdb.DB, error) {
	opts := g.cfg.DBOptions
	if create && opts != nil && opts.NoCreate {
		o := *opts
		o.NoCreate = false
		opts = &o
	}
	db, err := localdb.Open(g.file(name), opts)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	g.dbs[name] = db
	return db, nil
}

// create creates a database; couchdoc.ErrFileExists if it exists.
func (g *registry) create(ctx context.Context, name string) error {
	if err := validateDBName(name); err != nil {
		return err
	}
	if g.cfg.DBPath != "" {
		if name == g.cfg.DBName {
			return couchdoc.ErrFileExists
		}
		return couchdoc.Errorf(couchdoc.ErrForbidden, "This server serves the single database %q.", g.cfg.DBName)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.dbs[name]; ok {
		return couchdoc.ErrFileExists
	}
	if err := os.MkdirAll(g.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	f, err := os.OpenFile(g.file(name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return couchdoc.ErrFileExists
		}
		return fmt.Errorf("create database %s: %w", name, err)
	}
	f.Close()
	if _, err := g.openLocked(name, true); err != nil {
		os.Remove(g.file(name))
		return err
	}
	return nil
}

// remove closes and deletes a database.
func (g *registry) remove(ctx context.Context, name string) error {
	if err := validateDBName(name); err != nil {
		return err
	}
	if g.cfg.DBPath != "" {
		if name != g.cfg.DBName {
			return errNoDB
		}
		return couchdoc.Errorf(couchdoc.ErrForbidden, "The database %q cannot be deleted over HTTP.", name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	file := g.file(name)
	if db, ok := g.dbs[name]; ok {
		delete(g.dbs, name)
		if err := db.Close(); err != nil {
			return fmt.Errorf("delete database %s: %w", name, err)
		}
	}
	if err := os.Remove(file); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errNoDB
		}
		return fmt.Errorf("delete database %s: %w", name, err)
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		_ = os.Remove(file + suffix)
	}
	mango.CloseViews(file)
	_ = os.RemoveAll(mango.ViewDir(file))
	return nil
}

// names lists the databases, sorted.
func (g *registry) names() ([]string, error) {
	if g.cfg.DBPath != "" {
		return []string{g.cfg.DBName}, nil
	}
	entries, err := os.ReadDir(g.cfg.DataDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{}, nil
		}
		return nil, fmt.Errorf("list databases: %w", err)
	}
	names := []string{}
	seen := map[string]bool{}
	var others []string // files whose names are not database names
	for _, e := range entries {
		for _, ext := range dbFileExts {
			n, ok := strings.CutSuffix(e.Name(), ext)
			if !ok || e.IsDir() {
				continue
			}
			n = strings.ReplaceAll(n, "%2F", "/")
			switch {
			case validateDBName(n) != nil:
				others = append(others, e.Name())
			case !seen[n]:
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	aliases, notes := aliasFiles(others, seen)
	for n := range aliases {
		names = append(names, n)
	}
	g.mu.Lock()
	g.aliases, g.notes = aliases, notes
	g.mu.Unlock()
	sort.Strings(names)
	return names, nil
}

func (g *registry) closeAll() error {
	g.stopped.Store(true)
	g.mu.Lock()
	defer g.mu.Unlock()
	var errs []error
	for name, db := range g.dbs {
		if err := db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", name, err))
		}
		delete(g.dbs, name)
	}
	return errors.Join(errs...)
}

// CheckInvariants checks the invariants of every database the server has
// open (one winner per document, unique seqs, ...); for tests.
func (s *Server) CheckInvariants(ctx context.Context) error {
	s.dbs.mu.Lock()
	defer s.dbs.mu.Unlock()
	var errs []error
	for name, db := range s.dbs.dbs {
		if err := db.CheckInvariants(ctx); err != nil {
			errs = append(errs, fmt.Errorf("database %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
