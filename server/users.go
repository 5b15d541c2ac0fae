package server

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server/access"
)

// usersSource reads users from the server's _users database.
type usersSource struct{ s *Server }

// User returns the user document of name, if it has a password hash.
// Users are cached per _users handle, as CouchDB's couch_auth_cache: every
// write to _users goes through this server, which forgets the user it
// wrote (afterUsersWrite) or, after a purge, every user.
func (u usersSource) User(ctx context.Context, name string) (access.User, bool, error) {
	db, err := u.s.openDB(ctx, access.UsersDB)
	if err != nil {
		if errors.Is(err, errNoDB) {
			return access.User{}, false, nil
		}
		return access.User{}, false, err
	}
	key := userKey{db, name}
	if c, ok := u.s.userCache.Load(key); ok {
		cu := c.(cachedUser)
		return cu.user, cu.ok, nil
	}
	user, ok, err := readUser(ctx, db, name)
	if err == nil {
		u.s.userCache.Store(key, cachedUser{user, ok})
	}
	return user, ok, err
}

type userKey struct {
	db   *localdb.DB
	name string
}

type cachedUser struct {
	user access.User
	ok   bool
}

// forgetUsers empties the user cache.
func (s *Server) forgetUsers() {
	s.userCache.Range(func(k, _ any) bool {
		s.userCache.Delete(k)
		return true
	})
}

// readUser reads a user's document from _users.
func readUser(ctx context.Context, db *localdb.DB, name string) (access.User, bool, error) {
	doc, err := db.Get(ctx, access.UserPrefix+name, localdb.GetOptions{})
	if err != nil {
		if errors.Is(err, couchdoc.ErrNotFound) {
			return access.User{}, false, nil
		}
		return access.User{}, false, err
	}
	user, ok := access.ParseUser(doc)
	if ok && user.Name != name {
		ok = false
	}
	return user, ok, nil
}

// hasUsersDB reports whether the server keeps a _users database: a
// DataDir server with at least one admin, as CouchDB after its setup.
func (s *Server) hasUsersDB() bool { return s.cfg.DataDir != "" && len(s.cfg.Users) > 0 }

// openDB returns a database, making _users on first use.
func (s *Server) openDB(ctx context.Context, name string) (*localdb.DB, error) {
	db, err := s.dbs.get(ctx, name)
	if errors.Is(err, errNoDB) && (name == access.UsersDB || name == ReplicatorDB) && s.hasUsersDB() {
		// Admin-only, as CouchDB's system databases, whatever the default
		// of other databases (_users' is not even editable).
		if cerr := s.createDBWith(ctx, name, access.AdminOnly); cerr != nil && !errors.Is(cerr, couchdoc.ErrFileExists) {
			return nil, cerr
		}
		return s.dbs.get(ctx, name)
	}
	return db, err
}

// createDB creates a database with the server's default security object,
// as CouchDB 3 stores default_security into every new database.
func (s *Server) createDB(ctx context.Context, name string) error {
	return s.createDBWith(ctx, name, s.defaultSecurity())
}

func (s *Server) createDBWith(ctx context.Context, name string, sec *access.Security) error {
	if err := s.dbs.create(ctx, name); err != nil {
		return err
	}
	if s.cfg.DBPath != "" {
		return nil
	}
	db, err := s.dbs.get(ctx, name)
	if err != nil {
		return err
	}
	s.secCache.Delete(db)
	return db.InitSecurity(ctx, sec.Raw)
}

// PerUserPrefix starts the name of a user's own database.
const PerUserPrefix = "userdb-"

// perUserDB is the name of a user's database: userdb- and the hex of the
// name's bytes, as couch_peruser.
func perUserDB(name string) string { return PerUserPrefix + hex.EncodeToString([]byte(name)) }

// afterUsersWrite keeps per-user databases in step with _users: a new
// user gets one, a deleted user's goes when PerUserDelete is set.
// Failures are logged; the user document is written already.
func (s *Server) afterUsersWrite(ctx context.Context, doc *couchdoc.Doc) {
	// The written user is read again on its next request (a new password
	// or roles take effect at once).
	s.forgetUsers()
	if !s.cfg.PerUser || !strings.HasPrefix(doc.ID, access.UserPrefix) {
		return
	}
	name := strings.TrimPrefix(doc.ID, access.UserPrefix)
	dbName := perUserDB(name)
	if doc.Deleted {
		if s.cfg.PerUserDelete {
			if err := s.dbs.remove(ctx, dbName); err != nil && !errors.Is(err, errNoDB) {
				s.log.Warn("delete per-user database", "db", dbName, "err", err)
			}
		}
		return
	}
	names, _ := json.Marshal([]string{name})
	// As couch_peruser: the user is the database's only member and its
	// admin, beside the server admins.
	sec, err := access.ParseSecurity([]byte(`{"members":{"roles":["_admin"],"names":` + string(names) + `},"admins":{"roles":["_admin"],"names":` + string(names) + `}}`))
	if err != nil {
		return
	}
	if err := s.createDBWith(ctx, dbName, sec); err != nil && !errors.Is(err, couchdoc.ErrFileExists) {
		s.log.Warn("create per-user database", "db", dbName, "err", err)
	}
}
