package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// serveLocal is GET|PUT|DELETE /{db}/_local/{id}: checkpoints and other
// documents that never replicate.
func (s *Server) serveLocal(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	id := rt.docID
	if err := couchdoc.ValidateDocID(id); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		doc, err := db.GetLocal(r.Context(), id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if newQuery(r.URL).bool("revs") {
			// CouchDB shows a local doc's "0-N" as a one-entry history.
			doc.Revisions = &couchdoc.Revisions{Start: 0, IDs: []string{strings.TrimPrefix(doc.Rev, "0-")}}
		}
		b, err := doc.MarshalJSON()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("ETag", localETag(id, doc.Rev))
		writeJSON(w, http.StatusOK, rawJSON(b))
	case http.MethodPut:
		body, err := readBody(r)
		var doc *couchdoc.Doc
		if err == nil {
			doc, err = couchdoc.ParseDoc(body)
		}
		if err == nil {
			doc.Rev, err = requestRev(r, doc.Rev)
		}
		if err == nil {
			// CouchDB checks the names, then keeps a local document's
			// body alone.
			err = validateAttNames(doc)
			doc.Attachments = nil
		}
		var n int64
		if err == nil && doc.Rev != "" {
			n, err = localRevNumber(doc.Rev)
		}
		var rev string
		if err == nil && doc.Deleted {
			err, rev = db.RemoveLocal(r.Context(), id), "0-0"
		} else if err == nil {
			doc.ID = id
			rev, err = db.SetLocal(r.Context(), doc, n)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		setLocation(w, r, dbName(r), id, "")
		w.Header().Set("ETag", localETag(id, rev))
		writeJSON(w, http.StatusCreated, okRev{OK: true, ID: id, Rev: rev})
	case http.MethodDelete:
		// CouchDB deletes a local document at any rev.
		if err := db.RemoveLocal(r.Context(), id); err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("ETag", localETag(id, "0-0"))
		writeJSON(w, http.StatusOK, okRev{OK: true, ID: id, Rev: "0-0"})
	default:
		s.writeError(w, r, methodNotAllowed("DELETE,GET,HEAD,PUT"))
	}
}

// localETag is a local document's ETag: opaque, as CouchDB's, and new with
// every write.
func localETag(id, rev string) string { return opaqueETag(id, rev) }

// localRevNumber reads the N of a local document's "0-N" rev.
func localRevNumber(rev string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(rev, "0-"), 10, 64)
	if !strings.HasPrefix(rev, "0-") || err != nil || n < 0 {
		return 0, badRequest("Invalid rev format")
	}
	return n, nil
}
