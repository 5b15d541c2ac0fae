package server

import (
	"crypto/md5"
	"encoding/base32"
	"net/http"
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
			doc.ID = id
			doc.Rev, err = requestRev(r, doc.Rev)
		}
		if err == nil && len(doc.Attachments) > 0 {
			err = badRequest("local documents cannot have attachments")
		}
		var rev string
		if err == nil {
			rev, err = db.PutLocal(r.Context(), doc)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		setLocation(w, r, dbName(r), id, "")
		w.Header().Set("ETag", localETag(id, rev))
		writeJSON(w, http.StatusCreated, okRev{OK: true, ID: id, Rev: rev})
	case http.MethodDelete:
		rev, err := requestRev(r, "")
		if err == nil {
			err = db.DeleteLocal(r.Context(), id, rev)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, okRev{OK: true, ID: id, Rev: "0-0"})
	default:
		s.writeError(w, r, methodNotAllowed("DELETE,GET,HEAD,PUT"))
	}
}

// localETag is a local document's ETag: opaque, as CouchDB's, and new with
// every write.
func localETag(id, rev string) string {
	sum := md5.Sum([]byte(id + "\x00" + rev))
	return `"` + strings.ToUpper(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])) + `"`
}
