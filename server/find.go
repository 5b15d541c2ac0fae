package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	mango "github.com/settee/settee/localdb/query"
)

// serveFind answers POST /{db}/_find and /{db}/_explain.
func (s *Server) serveFind(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	body, err := readJSONRequest(r)
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
	s.streamFind(w, r, db, body)
}

// streamFind writes the documents as the query reads them: the answer
// starts with the first document (or at the end, for none), so a bad
// query still gets its error status; a failure after that ends the body
// short, as CouchDB does.
func (s *Server) streamFind(w http.ResponseWriter, r *http.Request, db *localdb.DB, body []byte) {
	started := false
	start := func() {
		if started {
			return
		}
		started = true
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "must-revalidate")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"docs":[`)
	}
	n := 0
	res, err := mango.FindViewed(r.Context(), db, body, s.replicatorView(r), func(doc json.RawMessage) error {
		start()
		if n > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		n++
		_, err := w.Write(doc)
		return err
	})
	if err != nil {
		if !started {
			s.writeError(w, r, err)
			return
		}
		s.log.Warn("_find ended early", "path", r.URL.Path, "err", err)
		return
	}
	start()
	// res has no docs: it encodes as {"docs":null,"bookmark":...}; what
	// follows the docs member closes the answer.
	var tail bytes.Buffer
	enc := json.NewEncoder(&tail)
	enc.SetEscapeHTML(false)
	const head = `{"docs":null,`
	if err := enc.Encode(res); err != nil || !bytes.HasPrefix(tail.Bytes(), []byte(head)) {
		s.log.Error("_find: encode answer", "err", err)
		return
	}
	_, _ = io.WriteString(w, "],")
	_, _ = w.Write(tail.Bytes()[len(head):])
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
		body, err := readJSONRequest(r)
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
