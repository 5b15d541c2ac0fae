package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server/access"
)

// systemDBs are the names starting with '_' that CouchDB allows for
// databases.
var systemDBs = map[string]bool{access.UsersDB: true, "_replicator": true, "_global_changes": true}

// CouchDB's words for a refused request: 401 for an anonymous one, 403
// for a known user (couch_db:throw_security_error).
const (
	reasonNotServerAdmin = "You are not a server admin."
	reasonNotMember      = "You are not allowed to access this db."
	reasonNotMemberAnon  = "You are not authorized to access this db."
	reasonNotDBAdmin     = "You are not a db or server admin."
)

// permit checks that the request's user has p.
func (s *Server) permit(p perm, c *call) error {
	u := c.auth.User
	switch p {
	case permServerAdmin:
		if !u.IsServerAdmin() {
			return couchdoc.Errorf(couchdoc.ErrUnauthorized, reasonNotServerAdmin)
		}
	case permAuthenticated:
		if u.IsAnonymous() {
			return couchdoc.Errorf(couchdoc.ErrUnauthorized, "You are not an authenticated user")
		}
	case permMember:
		if c.sec != nil && !c.sec.IsMember(u) {
			if u.IsAnonymous() {
				return couchdoc.Errorf(couchdoc.ErrUnauthorized, reasonNotMemberAnon)
			}
			return couchdoc.Errorf(couchdoc.ErrForbidden, reasonNotMember)
		}
	case permDBAdminUnauthorized:
		if c.sec != nil && !c.sec.IsMember(u) {
			return s.permit(permMember, c)
		}
		if c.sec != nil && !c.sec.IsAdmin(u) {
			return couchdoc.Errorf(couchdoc.ErrUnauthorized, "You are not a server or db admin.")
		}
	case permDBAdmin:
		if c.sec != nil && !c.sec.IsMember(u) {
			return s.permit(permMember, c)
		}
		if c.sec != nil && !c.sec.IsAdmin(u) {
			return notDBAdmin(u)
		}
	}
	return nil
}

func notDBAdmin(u access.UserCtx) error {
	if u.IsAnonymous() {
		return couchdoc.Errorf(couchdoc.ErrUnauthorized, reasonNotDBAdmin)
	}
	return couchdoc.Errorf(couchdoc.ErrForbidden, reasonNotDBAdmin)
}

// security returns a database's security object: as stored, or the
// server's default for a database that never had one (a store made
// outside the server). _users is always admin-only. Objects are cached
// per open database: the server is the only writer of security objects
// (setSecurity and database creation forget the cached one).
func (s *Server) security(ctx context.Context, name string, db *localdb.DB) (*access.Security, error) {
	if name == access.UsersDB {
		return access.AdminOnly, nil
	}
	if sec, ok := s.secCache.Load(db); ok {
		return sec.(*access.Security), nil
	}
	sec, err := s.readSecurity(ctx, db)
	if err == nil {
		s.secCache.Store(db, sec)
	}
	return sec, err
}

// setSecurity stores a database's security object.
func (s *Server) setSecurity(ctx context.Context, db *localdb.DB, sec *access.Security) error {
	s.secCache.Delete(db)
	err := db.SetSecurity(ctx, sec.Raw)
	s.secCache.Delete(db)
	return err
}

func (s *Server) readSecurity(ctx context.Context, db *localdb.DB) (*access.Security, error) {
	raw, err := db.Security(ctx)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		return s.defaultSecurity(), nil
	}
	sec, err := access.ParseSecurity(raw)
	if err != nil {
		// A stored object is one we validated; a damaged one must not
		// open the database to everyone.
		return access.AdminOnly, nil
	}
	return sec, nil
}

// defaultSecurity is the object a new database gets: CouchDB 3's
// default_security = admin_only unless the server says everyone.
func (s *Server) defaultSecurity() *access.Security {
	if s.cfg.DefaultSecurityEveryone {
		return access.Everyone
	}
	return access.AdminOnly
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// callOf returns the call of a request's context (nil outside ServeHTTP).
func callOf(r *http.Request) *call {
	c, _ := r.Context().Value(callKey{}).(*call)
	return c
}

// checkDocWrite applies what CouchDB checks of every document write
// before validate_doc_update: a design document needs a db admin
// (couch_db:validate_doc_update), and a write to _users follows that
// database's rules (password hashed, names and roles checked, against
// the revision the write replaces), a write to _replicator its own; then
// the database's validate_doc_update functions. It may change doc (the
// _users password). Every path that writes a document calls it.
func (s *Server) checkDocWrite(r *http.Request, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) error {
	c := callOf(r)
	if c == nil || couchdoc.IsLocalID(doc.ID) {
		return nil
	}
	if strings.HasPrefix(doc.ID, couchdoc.DesignPrefix) && c.sec != nil && !c.sec.IsAdmin(c.auth.User) {
		return notDBAdmin(c.auth.User)
	}
	if c.rt.db == ReplicatorDB {
		u := c.auth.User
		return s.checkReplicatorDoc(doc, u, u.IsServerAdmin() || c.sec != nil && c.sec.IsAdmin(u), newEdits)
	}
	if c.rt.db == access.UsersDB {
		old := replacedDoc(r, db, doc, newEdits)
		return access.PrepareUserDoc(doc, old, c.auth.User, access.AdminOnly, s.cfg.PasswordIterations)
	}
	if c.sec == nil && c.db != nil {
		// validate_doc_update gets the database's security object as
		// secObj, for server admins too (their requests skip reading it).
		sec, err := s.security(r.Context(), c.rt.db, c.db)
		if err != nil {
			return err
		}
		c.sec = sec
	}
	return checkWrite(r.Context(), db, doc, newEdits)
}

// replacedDoc is the revision a write replaces: with new_edits, the one
// its _rev names (the winner when it names none); a replicated revision
// replaces its parent in _revisions. Nil for a new document.
func replacedDoc(r *http.Request, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) *couchdoc.Doc {
	rev := doc.Rev
	if !newEdits {
		rev = ""
		if rv := doc.Revisions; rv != nil && len(rv.IDs) > 1 && rv.Start > 1 {
			rev = strconv.Itoa(rv.Start-1) + "-" + rv.IDs[1]
		} else {
			return nil
		}
	}
	old, err := db.Get(r.Context(), doc.ID, localdb.GetOptions{Rev: rev})
	if err != nil {
		return nil
	}
	return old
}

// afterWrite runs what follows a successful document write: the
// per-user databases of a _users write.
func (s *Server) afterWrite(r *http.Request, doc *couchdoc.Doc) {
	c := callOf(r)
	switch {
	case c == nil:
	case c.rt.db == access.UsersDB:
		s.afterUsersWrite(r.Context(), doc)
	case c.rt.db == ReplicatorDB && s.sched != nil:
		s.sched.Kick()
	}
}
