package server

import (
	"encoding/json"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	mango "github.com/settee/settee/localdb/query"
)

// JavaScript views (localdb/mango.View) over HTTP: _design/x/_view/y (GET,
// or POST with keys and options in the body), _design/x/_view/y/queries,
// _design/x/_info and _view_cleanup.

// serveView answers /{db}/_design/{ddoc}/_view/{view}[/queries].
func (s *Server) serveView(w http.ResponseWriter, r *http.Request, db *localdb.DB, ddoc, view, rest string) {
	if rest != "" && rest != "queries" {
		s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrNotFound, "missing_named_view"))
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if rest == "queries" {
			s.writeError(w, r, methodNotAllowed("POST"))
			return
		}
	case http.MethodPost:
	default:
		s.writeError(w, r, methodNotAllowed("GET,POST,HEAD"))
		return
	}
	opts, err := mango.ViewOptionsFromURL(r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var body map[string]json.RawMessage
	if r.Method == http.MethodPost {
		b, err := readJSONRequest(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := json.Unmarshal(b, &body); err != nil || body == nil {
			s.writeError(w, r, badRequest("Request body must be a JSON object"))
			return
		}
		if k, ok := body["keys"]; ok && (len(k) == 0 || k[0] != '[') {
			s.writeError(w, r, badRequest("`keys` member must be an array."))
			return
		}
	}
	if rest == "queries" {
		s.serveViewQueries(w, r, db, ddoc, view, body)
		return
	}
	if _, ok := body["queries"]; ok {
		s.writeError(w, r, badRequest("The `queries` parameter is no longer supported at this endpoint"))
		return
	}
	if len(body) > 0 {
		if opts, err = mergeViewOptions(r, body); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	res, err := mango.View(r.Context(), db, ddoc, view, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	viewRowDocs(s.replicatorView(r), res)
	writeJSON(w, http.StatusOK, res)
}

// mergeViewOptions reads the options of the query string overridden by
// those of a POST body.
func mergeViewOptions(r *http.Request, body map[string]json.RawMessage) (*mango.ViewOptions, error) {
	m := map[string]json.RawMessage{}
	for k, vs := range r.URL.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "key", "keys", "startkey", "start_key", "endkey", "end_key":
			if !json.Valid([]byte(v)) {
				return nil, mango.ErrInvalidJSON
			}
			m[k] = json.RawMessage(v)
		default:
			b, _ := json.Marshal(v)
			m[k] = b
		}
	}
	for k, v := range body {
		m[k] = v
	}
	return mango.ParseViewOptions(m)
}

// serveViewQueries answers POST _view/{view}/queries: {"results": [...]},
// one answer per query of the body's "queries".
func (s *Server) serveViewQueries(w http.ResponseWriter, r *http.Request, db *localdb.DB, ddoc, view string, body map[string]json.RawMessage) {
	var queries []json.RawMessage
	if err := json.Unmarshal(body["queries"], &queries); err != nil || queries == nil {
		s.writeError(w, r, badRequest("`queries` member must be an array"))
		return
	}
	results := make([]*mango.ViewResult, 0, len(queries))
	for _, q := range queries {
		opts, err := mango.ViewOptionsFromJSON(q)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		res, err := mango.View(r.Context(), db, ddoc, view, opts)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		viewRowDocs(s.replicatorView(r), res)
		results = append(results, res)
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// serveDesignInfo answers GET /{db}/_design/{ddoc}/_info.
func (s *Server) serveDesignInfo(w http.ResponseWriter, r *http.Request, db *localdb.DB, ddoc string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed("GET"))
		return
	}
	info, err := mango.ViewInfo(r.Context(), db, ddoc)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

// serveViewCleanup answers POST /{db}/_view_cleanup.
func (s *Server) serveViewCleanup(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	// CouchDB takes a request without a Content-Type (the auth corpus
	// sends none) and checks the one it is given.
	if r.Header.Get("Content-Type") != "" {
		if _, err := readJSONRequest(r); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if err := mango.ViewCleanup(r.Context(), db); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
}

// viewRowDocs shows include_docs' documents as view (replicatorView)
// allows.
func viewRowDocs(view func(*couchdoc.Doc), res *mango.ViewResult) {
	if view == nil {
		return
	}
	for i, row := range res.Rows {
		if len(row.Doc) == 0 || row.Doc[0] != '{' {
			continue
		}
		doc, err := couchdoc.ParseDoc(row.Doc)
		if err != nil {
			res.Rows[i].Doc = json.RawMessage("null") // never shown unviewed
			continue
		}
		view(doc)
		b, err := doc.MarshalJSON()
		if err != nil {
			b = json.RawMessage("null")
		}
		res.Rows[i].Doc = b
	}
}
