package server

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// copyDoc is COPY /{db}/{docid}: the source revision (?rev=, else the
// winner), attachments included, written under the Destination header's
// id, which may name the destination revision it replaces
// ("id?rev=N-x"), as CouchDB does.
func (s *Server) copyDoc(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	dest, destRev, err := copyDestination(r.Header.Get("Destination"))
	if err == nil {
		err = couchdoc.ValidateDocID(dest)
	}
	var src *couchdoc.Doc
	if err == nil {
		src, err = db.Get(r.Context(), rt.docID, localdb.GetOptions{Rev: r.URL.Query().Get("rev"), Attachments: true})
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer closeBodies(src)
	for _, a := range src.Attachments {
		a.RevPos, a.Stub = 0, false
	}
	rev, err := s.storeDoc(r, db, &couchdoc.Doc{ID: dest, Rev: destRev, Body: src.Body, Attachments: src.Attachments}, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+rev+`"`)
	setLocation(w, r, rt.db, dest, "")
	writeJSON(w, http.StatusCreated, okRev{OK: true, ID: dest, Rev: rev})
}

// copyDestination reads a Destination header: an id, optionally followed
// by "?rev=" and the revision to replace.
func copyDestination(h string) (id, rev string, err error) {
	if h == "" {
		return "", "", badRequest("Destination header is mandatory for COPY.")
	}
	id, query, _ := strings.Cut(h, "?")
	if u, uerr := url.PathUnescape(id); uerr == nil {
		id = u
	}
	if query != "" {
		q, qerr := url.ParseQuery(query)
		if qerr != nil {
			return "", "", badRequest("Invalid Destination header")
		}
		rev = q.Get("rev")
	}
	return id, rev, nil
}
