package server

import (
	"mime"
	"net/http"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	mango "github.com/settee/settee/localdb/query"
)

// requireJSON answers CouchDB's 415 for a body that is not
// application/json, as chttpd:validate_ctype does for Mango's endpoints.
func requireJSON(r *http.Request) error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		return &couchdoc.Error{Status: http.StatusUnsupportedMediaType, Name: "bad_content_type", Reason: "Content-Type must be application/json"}
	}
	return nil
}

// serveFind answers POST /{db}/_find and /{db}/_explain.
func (s *Server) serveFind(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	if err := requireJSON(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if rt.special == "_explain" {
		ex, err := mango.Explain(r.Context(), db, rt.db, body)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, ex)
		return
	}
	res, err := mango.Find(r.Context(), db, body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// serveIndex answers GET and POST /{db}/_index and DELETE
// /{db}/_index/{ddoc}/json/{name} ({ddoc} with or without "_design/").
func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	if rt.docID != "" {
		parts := strings.Split(rt.docID, "/")
		if len(parts) == 4 && parts[0] == "_design" {
			parts = []string{"_design/" + parts[1], parts[2], parts[3]}
		}
		if len(parts) != 3 {
			s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrNotFound, "unknown path"))
			return
		}
		if r.Method != http.MethodDelete {
			s.writeError(w, r, methodNotAllowed("DELETE"))
			return
		}
		if parts[1] != "json" {
			s.writeError(w, r, mango.ErrIndexNotFound)
			return
		}
		if err := mango.DeleteIndex(r.Context(), db, parts[0], parts[2]); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, okTrue)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		writeJSON(w, http.StatusOK, mango.ListIndexes(db))
	case http.MethodPost:
		if err := requireJSON(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		body, err := readBody(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		res, err := mango.CreateIndex(r.Context(), db, body)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	default:
		s.writeError(w, r, methodNotAllowed("GET,POST"))
	}
}
