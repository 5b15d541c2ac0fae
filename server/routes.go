package server

import (
	"net/http"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server/access"
)

// perm is what a route asks of the request's user, checked before its
// handler runs (CouchDB's chttpd checks, in one place).
type perm int

const (
	// permPublic: anyone, anonymous included.
	permPublic perm = iota
	// permServerAdmin: a server admin (401 "You are not a server admin."
	// for everyone else, as CouchDB's verify_is_server_admin).
	permServerAdmin
	// permMember: a member of the database (or anyone when its members
	// are empty): reads and writes documents.
	permMember
	// permDBAdmin: an admin of the database or a server admin.
	permDBAdmin
	// permDBAdminUnauthorized: a db admin, checked before membership and
	// refused with 401 "You are not a server or db admin." whoever asks,
	// as CouchDB's chttpd_auth_request does for compaction and cleanup.
	permDBAdminUnauthorized
	// permAuthenticated: any user who logged in (401 "You are not an
	// authenticated user" for anonymous, as CouchDB's
	// require_authenticated_user).
	permAuthenticated
)

func (p perm) String() string {
	return [...]string{"public", "server admin", "member", "db admin", "db admin (401)", "authenticated"}[p]
}

// call is one request as its handler sees it.
type call struct {
	rt      route
	db      *localdb.DB // nil at server level, or when openErr is set
	openErr error
	auth    access.Result
	sec     *access.Security // the database's, nil at server level
}

type handler func(s *Server, w http.ResponseWriter, r *http.Request, c *call)

// routeRow is one entry of the route table: requests of a path shape and
// method go to a handler once the user has the permission. Method "" is
// every method without a row of its own (the handler answers 405 for the
// ones it does not serve).
type routeRow struct {
	shape  string
	method string
	perm   perm
	serve  handler
}

// Path shapes, as shapeOf names a parsed route.
const (
	shRoot        = "/"
	shServer      = "/_{endpoint}" // an unknown server endpoint
	shDB          = "/{db}"
	shDoc         = "/{db}/{docid}"
	shAtt         = "/{db}/{docid}/{attname}"
	shLocal       = "/{db}/_local/{docid}"
	shRefused     = "/{db}/_local" // a _local path CouchDB refuses
	shDesign      = "/{db}/_design/{ddoc}"
	shDesignAtt   = "/{db}/_design/{ddoc}/{attname}"
	shDesignFunc  = "/{db}/_design/{ddoc}/_{action}/{name}"
	shIndexByName = "/{db}/_index/{ddoc}/{type}/{name}"
)

// serverEndpoints are the server-level paths with rows of their own.
var serverEndpoints = map[string]bool{"_up": true, "_session": true, "_uuids": true, "_all_dbs": true,
	"_active_tasks": true, "_dbs_info": true, "_scheduler": true, "_replicate": true}

// shapeOf names the shape of a parsed route.
func shapeOf(rt route) string {
	switch {
	case rt.db == "" && rt.special == "":
		return shRoot
	case rt.db == "" && serverEndpoints[rt.special] && (rt.docID == "" || rt.special == "_scheduler"):
		return "/" + rt.special
	case rt.db == "":
		return shServer
	case rt.refused != nil:
		return shRefused
	case rt.special == "_index" && rt.docID != "":
		return shIndexByName
	case rt.special != "":
		return "/{db}/" + rt.special
	case rt.docID == "":
		return shDB
	case couchdoc.IsLocalID(rt.docID):
		return shLocal
	case strings.HasPrefix(rt.docID, couchdoc.DesignPrefix) && rt.att != "" && isDesignAction(rt.att):
		return shDesignFunc
	case strings.HasPrefix(rt.docID, couchdoc.DesignPrefix) && rt.att != "":
		return shDesignAtt
	case strings.HasPrefix(rt.docID, couchdoc.DesignPrefix):
		return shDesign
	case rt.att != "":
		return shAtt
	}
	return shDoc
}

// routes is the route table: every path the server answers, each with the
// permission it needs. TestRoutesRefuseStrangers walks it.
var routes = []routeRow{
	{shRoot, "", permPublic, (*Server).serveWelcome},
	{"/_up", "", permPublic, (*Server).serveUp},
	{"/_session", "", permPublic, (*Server).serveSession},
	{"/_uuids", "", permPublic, func(s *Server, w http.ResponseWriter, r *http.Request, _ *call) { s.serveUUIDs(w, r) }},
	{"/_all_dbs", "", permServerAdmin, (*Server).serveAllDBs},
	{"/_active_tasks", "", permServerAdmin, (*Server).serveActiveTasks},
	{"/_dbs_info", "", permServerAdmin, (*Server).serveDBsInfo},
	{"/_scheduler", "", permServerAdmin, (*Server).serveScheduler},
	{"/_replicate", "", permAuthenticated, (*Server).serveReplicate},
	{shServer, "", permPublic, (*Server).serveUnknownServer},

	{shDB, http.MethodGet, permMember, (*Server).serveDB},
	{shDB, http.MethodHead, permMember, (*Server).serveDB},
	{shDB, http.MethodPost, permMember, (*Server).serveDB},
	{shDB, http.MethodPut, permServerAdmin, (*Server).serveDB},
	{shDB, http.MethodDelete, permServerAdmin, (*Server).serveDB},
	{shDB, "", permPublic, (*Server).serveDB},

	{"/{db}/_changes", "", permMember, dbHandler((*Server).serveChanges)},
	{"/{db}/_revs_diff", "", permMember, dbHandler((*Server).serveRevsDiff)},
	{"/{db}/_missing_revs", "", permMember, dbHandler((*Server).serveMissingRevs)},
	{"/{db}/_bulk_docs", "", permMember, dbHandler((*Server).serveBulkDocs)},
	{"/{db}/_bulk_get", "", permMember, dbHandler((*Server).serveBulkGet)},
	{"/{db}/_all_docs", "", permMember, func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.serveAllDocs(w, r, c.db, false)
	}},
	{"/{db}/_design_docs", "", permMember, func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.serveAllDocs(w, r, c.db, true)
	}},
	{"/{db}/_all_docs/queries", "", permMember, func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.serveAllDocsQueries(w, r, c.db, false)
	}},
	{"/{db}/_design_docs/queries", "", permMember, func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.serveAllDocsQueries(w, r, c.db, true)
	}},
	{"/{db}/_local_docs", "", permMember, dbHandler((*Server).serveLocalDocs)},
	{"/{db}/_ensure_full_commit", "", permMember, (*Server).serveEnsureFullCommit},
	{"/{db}/_revs_limit", http.MethodGet, permMember, dbHandler((*Server).serveRevsLimit)},
	{"/{db}/_revs_limit", "", permDBAdmin, dbHandler((*Server).serveRevsLimit)},
	{"/{db}/_purge", "", permServerAdmin, dbHandler((*Server).servePurge)},
	{"/{db}/_purged_infos", "", permMember, dbHandler((*Server).servePurgedInfos)},
	{"/{db}/_purged_infos_limit", http.MethodGet, permMember, dbHandler((*Server).servePurgedInfosLimit)},
	{"/{db}/_purged_infos_limit", "", permDBAdmin, dbHandler((*Server).servePurgedInfosLimit)},
	{"/{db}/_find", "", permMember, routeHandler((*Server).serveFind)},
	{"/{db}/_explain", "", permMember, routeHandler((*Server).serveFind)},
	{"/{db}/_index", http.MethodGet, permMember, routeHandler((*Server).serveIndex)},
	{"/{db}/_index", "", permDBAdmin, routeHandler((*Server).serveIndex)},
	{shIndexByName, "", permDBAdmin, routeHandler((*Server).serveIndex)},
	{"/{db}/_compact", "", permDBAdminUnauthorized, (*Server).serveCompact},
	{"/{db}/_view_cleanup", "", permDBAdminUnauthorized, dbHandler((*Server).serveViewCleanup)},
	{"/{db}/_security", http.MethodGet, permMember, (*Server).serveSecurity},
	{"/{db}/_security", http.MethodHead, permMember, (*Server).serveSecurity},
	{"/{db}/_security", "", permDBAdmin, (*Server).serveSecurity},
	{shRefused, "", permMember, func(s *Server, w http.ResponseWriter, r *http.Request, c *call) {
		s.writeError(w, r, c.rt.refused)
	}},

	{shLocal, "", permMember, routeHandler((*Server).serveLocal)},
	{shDesign, http.MethodGet, permMember, routeHandler((*Server).serveDoc)},
	{shDesign, http.MethodHead, permMember, routeHandler((*Server).serveDoc)},
	// Writes of design documents need a db admin whatever the path
	// (_bulk_docs, POST, COPY included): checkDocWrite says so per
	// document; these rows answer before the body is read.
	{shDesign, http.MethodPut, permDBAdmin, routeHandler((*Server).serveDoc)},
	{shDesign, http.MethodDelete, permDBAdmin, routeHandler((*Server).serveDoc)},
	{shDesign, "", permMember, routeHandler((*Server).serveDoc)},
	{shDesignAtt, http.MethodPut, permDBAdmin, routeHandler((*Server).serveAttachment)},
	{shDesignAtt, http.MethodDelete, permDBAdmin, routeHandler((*Server).serveAttachment)},
	{shDesignAtt, "", permMember, routeHandler((*Server).serveAttachment)},
	{shDesignFunc, "", permMember, routeHandler((*Server).serveDesignAction)},
	{shAtt, "", permMember, routeHandler((*Server).serveAttachment)},
	{shDoc, "", permMember, routeHandler((*Server).serveDoc)},
}

// dbHandler adapts a handler of (w, r, db).
func dbHandler(f func(*Server, http.ResponseWriter, *http.Request, *localdb.DB)) handler {
	return func(s *Server, w http.ResponseWriter, r *http.Request, c *call) { f(s, w, r, c.db) }
}

// routeHandler adapts a handler of (w, r, rt, db).
func routeHandler(f func(*Server, http.ResponseWriter, *http.Request, route, *localdb.DB)) handler {
	return func(s *Server, w http.ResponseWriter, r *http.Request, c *call) { f(s, w, r, c.rt, c.db) }
}

// routeIndex finds a row by shape and method.
var routeIndex = func() map[[2]string]*routeRow {
	m := map[[2]string]*routeRow{}
	for i := range routes {
		row := &routes[i]
		k := [2]string{row.shape, row.method}
		if m[k] != nil {
			panic("server: two routes for " + row.shape + " " + row.method)
		}
		m[k] = row
	}
	return m
}()

// systemOnlyForAdmins are the feeds of a system database (_users,
// _replicator) that only server admins read, whatever its security
// object says, as CouchDB.
var systemOnlyForAdmins = map[string]bool{"/{db}/_all_docs": true, "/{db}/_all_docs/queries": true, "/{db}/_changes": true}

// permOf is the permission a request needs: its row's, or a server
// admin's for a system database's feeds.
func permOf(row *routeRow, rt route) perm {
	if systemDBs[rt.db] && systemOnlyForAdmins[row.shape] {
		return permServerAdmin
	}
	return row.perm
}

// lookupRoute returns the row serving a request; nil when the shape has
// no row at all (a bug the route test catches).
func lookupRoute(shape, method string) *routeRow {
	if row := routeIndex[[2]string{shape, method}]; row != nil {
		return row
	}
	return routeIndex[[2]string{shape, ""}]
}
