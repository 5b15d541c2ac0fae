package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// route is a request path split into CouchDB's parts, unescaped: a "%2F"
// inside a document id is part of the id, not a separator.
type route struct {
	db      string // "" for server-level paths
	special string // server or database endpoint such as "_changes"
	docID   string // full id, with "_design/" or "_local/" prefix
	att     string // attachment name, may hold '/'
	dbSlash bool   // "/{db}/" with a trailing slash
	// refused is CouchDB's answer to a database path it refuses once the
	// database is known to exist.
	refused *couchdoc.Error
}

// CouchDB's answers to /{db}/_local without an id, and to a local
// document's attachment (chttpd_db:db_req).
var (
	errBadLocalID      = &couchdoc.Error{Status: http.StatusBadRequest, Name: "bad_request", Reason: "Invalid _local document id."}
	errLocalAttachment = &couchdoc.Error{Status: http.StatusBadRequest, Name: "bad_request", Reason: "_local documents do not accept attachments."}
)

// parseRoute splits an escaped URL path.
func parseRoute(escaped string) (route, error) {
	var rt route
	p := strings.TrimPrefix(escaped, "/")
	if p == "" {
		return rt, nil
	}
	raw := strings.Split(p, "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		// CouchDB (mochiweb) decodes a raw '+' in a path as a space, as in
		// a query; a literal '+' travels as %2B.
		u, err := url.QueryUnescape(s)
		if err != nil {
			return rt, badRequest("invalid URL path escaping")
		}
		segs[i] = u
	}
	if strings.HasPrefix(segs[0], "_") && !systemDBs[segs[0]] {
		rt.special = segs[0]
		if len(segs) > 1 {
			rt.docID = strings.Join(segs[1:], "/")
		}
		return rt, nil
	}
	rt.db = segs[0]
	rest := segs[1:]
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && rest[0] == "":
		rt.dbSlash = true
	case rest[0] == "_local" && (len(rest) < 2 || rest[1] == ""):
		rt.refused = errBadLocalID
	case rest[0] == "_local" && len(rest) > 2:
		// A raw '/' after a local id names an attachment (an id's own
		// '/' travels as %2F), and local documents have none.
		rt.refused = errLocalAttachment
	case rest[0] == "_local" || rest[0] == "_design":
		if len(rest) < 2 || rest[1] == "" {
			return rt, badRequest("Document id must not be empty")
		}
		rt.docID = rest[0] + "/" + rest[1]
		if len(rest) > 2 {
			rt.att = strings.Join(rest[2:], "/")
		}
	case rest[0] == "_index" && len(rest) > 1:
		rt.special, rt.docID = rest[0], strings.Join(rest[1:], "/")
	case strings.HasPrefix(rest[0], "_") && isDBEndpoint(rest[0]):
		rt.special = rest[0]
		if len(rest) == 2 && rest[1] == "queries" && (rest[0] == "_all_docs" || rest[0] == "_design_docs") {
			rt.special += "/queries"
		} else if len(rest) > 1 {
			return rt, couchdoc.Errorf(couchdoc.ErrNotFound, "unknown path")
		}
	case rest[0] == "":
		return rt, badRequest("Document id must not be empty")
	default:
		rt.docID = rest[0]
		if len(rest) > 1 {
			rt.att = strings.Join(rest[1:], "/")
		}
	}
	return rt, nil
}

func isDBEndpoint(s string) bool {
	switch s {
	case "_changes", "_revs_diff", "_bulk_docs", "_bulk_get", "_ensure_full_commit",
		"_all_docs", "_design_docs", "_local_docs", "_revs_limit", "_compact", "_security", "_find", "_index", "_explain",
		"_purge", "_purged_infos", "_purged_infos_limit", "_missing_revs", "_view_cleanup":
		return true
	}
	return false
}

// ServeHTTP serves CouchDB's API: the path is parsed, the user
// authenticated, the route found in the table and its permission checked
// before its handler runs.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		s.log.Debug("request", "method", r.Method, "path", r.URL.EscapedPath(), "status", rec.status, "dur", time.Since(start))
	}()
	w = rec
	if s.cors(w, r) {
		return
	}
	if r.ContentLength > s.cfg.MaxBodySize {
		s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrTooLarge, "the request body is larger than %d bytes", s.cfg.MaxBodySize))
		return
	}
	if r.Body != nil {
		r.Body = &bodyWatch{ReadCloser: http.MaxBytesReader(w, r.Body, s.cfg.MaxBodySize)}
	}
	if s.sched != nil {
		_, _ = s.startScheduler(context.Background())
	}
	rt, err := parseRoute(r.URL.EscapedPath())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.auth.Authenticate(r.Context(), r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if res.Renew != "" {
		s.setSessionCookie(w, r, res.Renew)
	}
	c := &call{rt: rt, auth: res}
	row := lookupRoute(shapeOf(rt), r.Method)
	if row == nil {
		s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrNotFound, "unknown path"))
		return
	}
	need := permOf(row, rt)
	if need == permServerAdmin {
		// CouchDB checks a server admin before it looks for the
		// database (creating and deleting one).
		if err := s.permit(need, c); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if rt.db != "" {
		c.db, c.openErr = s.openDB(r.Context(), rt.db)
		// A server admin passes every check: the security object is
		// read only for other users.
		if c.openErr == nil && !c.auth.User.IsServerAdmin() {
			c.sec, c.openErr = s.security(r.Context(), rt.db, c.db)
		}
		// A missing database is 404 for everyone but a request that
		// creates it (CouchDB opens the database before it checks).
		if c.openErr != nil && !(row.shape == shDB && r.Method == http.MethodPut) {
			s.writeError(w, r, c.openErr)
			return
		}
	}
	if err := s.permit(need, c); err != nil {
		s.writeError(w, r, err)
		return
	}
	r = r.WithContext(withCall(r.Context(), c))
	row.serve(s, w, r, c)
}

func methodNotAllowed(allowed string) error {
	return &couchdoc.Error{Status: http.StatusMethodNotAllowed, Name: "method_not_allowed", Reason: "Only " + allowed + " allowed"}
}

func isGet(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// Features are the CouchDB features GET / lists, which clients branch on:
// only those this server has. JavaScript design functions run in QuickJS
// ("quickjs", as CouchDB 3.5 says of its own engine) and _replicator
// documents run on a scheduler ("scheduler"); there are no
// partitioned databases, per-document access, storage engines to choose
// or resharding.
var Features = []string{"quickjs", "scheduler"}

// serveWelcome is GET /.
func (s *Server) serveWelcome(w http.ResponseWriter, r *http.Request, _ *call) {
	if !isGet(r) {
		s.writeError(w, r, methodNotAllowed("GET,HEAD"))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"couchdb":  "Welcome",
		"version":  Version,
		"uuid":     s.serverUUID(r),
		"vendor":   map[string]string{"name": "Settee", "version": Version},
		"features": Features,
	})
}

// serveUp is GET /_up.
func (s *Server) serveUp(w http.ResponseWriter, r *http.Request, _ *call) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "seeds": map[string]any{}})
}

// serveAllDBs is GET /_all_dbs.
func (s *Server) serveAllDBs(w http.ResponseWriter, r *http.Request, _ *call) {
	if !isGet(r) {
		s.writeError(w, r, methodNotAllowed("GET,HEAD"))
		return
	}
	names, err := s.dbs.names()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", opaqueETag(names...))
	writeJSON(w, http.StatusOK, names)
}

// serveUnknownServer answers a server-level path this server lacks as
// CouchDB: a name that cannot be a database is 400, else 404.
func (s *Server) serveUnknownServer(w http.ResponseWriter, r *http.Request, c *call) {
	if c.rt.docID == "" {
		s.writeError(w, r, validateDBName(c.rt.special))
		return
	}
	s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrNotFound, "Database does not exist."))
}

func (s *Server) serveUUIDs(w http.ResponseWriter, r *http.Request) {
	n := 1
	if c := r.URL.Query().Get("count"); c != "" {
		v, err := parseInt(c)
		if err != nil || v < 1 || v > 1000 {
			s.writeError(w, r, badRequest("count must be between 1 and 1000"))
			return
		}
		n = int(v)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = newUUID()
	}
	w.Header().Set("Cache-Control", "must-revalidate, no-cache")
	w.Header().Set("ETag", opaqueETag(ids...))
	writeJSON(w, http.StatusOK, map[string][]string{"uuids": ids})
}

// serveDB answers /{db}: info, create, delete, and POST of a new document.
func (s *Server) serveDB(w http.ResponseWriter, r *http.Request, c *call) {
	rt, db, openErr := c.rt, c.db, c.openErr
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		info, err := s.dbInfo(r.Context(), rt.db)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, info)
	case http.MethodPut:
		if err := s.createDB(r.Context(), rt.db); err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Location", "/"+url.PathEscape(rt.db))
		writeJSON(w, http.StatusCreated, okTrue)
	case http.MethodDelete:
		if r.URL.Query().Has("rev") {
			s.writeError(w, r, badRequest("You tried to DELETE a database with a ?rev= parameter. Did you mean to DELETE a document instead?"))
			return
		}
		if err := s.dbs.remove(r.Context(), rt.db); err != nil {
			s.writeError(w, r, err)
			return
		}
		s.secCache.Delete(db)
		writeJSON(w, http.StatusOK, okTrue)
	case http.MethodPost:
		if openErr != nil {
			s.writeError(w, r, openErr)
			return
		}
		s.postDoc(w, r, rt, db)
	default:
		s.writeError(w, r, methodNotAllowed("DELETE,GET,HEAD,POST,PUT"))
	}
}

// serveEnsureFullCommit is POST /{db}/_ensure_full_commit: every write is
// durable when acknowledged.
func (s *Server) serveEnsureFullCommit(w http.ResponseWriter, r *http.Request, _ *call) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"ok": true, "instance_start_time": s.start})
}

// serveCompact is POST /{db}/_compact.
func (s *Server) serveCompact(w http.ResponseWriter, r *http.Request, c *call) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	if err := c.db.Compact(r.Context()); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, okTrue)
}

func (s *Server) serveRevsLimit(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, db.RevsLimit())
	case http.MethodPut:
		var n int64
		b, err := readBody(r)
		if err == nil {
			err = decodeJSON(b, &n)
		}
		if err == nil && n < 1 {
			err = badRequest("revs_limit must be a positive integer")
		}
		if err == nil {
			err = db.SetRevsLimit(r.Context(), int(n))
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, okTrue)
	default:
		s.writeError(w, r, methodNotAllowed("GET,PUT"))
	}
}

// statusRecorder remembers the status for the request log and passes
// flushes through (feeds need them).
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
