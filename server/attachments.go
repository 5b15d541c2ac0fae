package server

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// serveAttachment is GET|HEAD|PUT|DELETE /{db}/{docid}/{name}. Bytes are
// streamed both ways, never held whole.
func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	if err := couchdoc.ValidateDocID(rt.docID); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.getAttachment(w, r, rt, db)
	case http.MethodPut:
		s.putAttachment(w, r, rt, db)
	case http.MethodDelete:
		s.deleteAttachment(w, r, rt, db)
	default:
		s.writeError(w, r, methodNotAllowed("DELETE,GET,HEAD,PUT"))
	}
}

func (s *Server) getAttachment(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	rev := r.URL.Query().Get("rev")
	if rev != "" {
		if _, _, err := couchdoc.ParseRev(rev); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	att, body, err := db.OpenAttachment(r.Context(), rt.docID, rev, rt.att)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer body.Close()
	h := w.Header()
	etag := `"` + strings.TrimPrefix(att.Digest, "md5-") + `"`
	h.Set("ETag", etag)
	h.Set("Cache-Control", "must-revalidate")
	h.Set("Accept-Ranges", "none")
	if d, ok := strings.CutPrefix(att.Digest, "md5-"); ok {
		h.Set("Content-MD5", d)
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	ct := att.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(att.Length, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, body); err != nil {
		s.log.Warn("write attachment", "err", err)
	}
}

// currentDoc reads the revision an attachment edit applies to, with its
// attachments as stubs; rev "" means the document must not exist yet.
func currentDoc(r *http.Request, db *localdb.DB, id, rev string) (*couchdoc.Doc, error) {
	if rev == "" {
		return &couchdoc.Doc{ID: id, Body: []byte("{}")}, nil
	}
	if _, _, err := couchdoc.ParseRev(rev); err != nil {
		return nil, err
	}
	cur, err := db.Get(r.Context(), id, localdb.GetOptions{Rev: rev})
	if err != nil {
		return nil, err
	}
	doc := &couchdoc.Doc{ID: id, Rev: rev, Body: cur.Body, Attachments: map[string]*couchdoc.Attachment{}}
	for name, a := range cur.Attachments {
		cp := *a
		cp.Stub, cp.Data, cp.Body, cp.Follows = true, nil, nil, false
		doc.Attachments[name] = &cp
	}
	return doc, nil
}

// validateAttName checks an attachment name as CouchDB does.
func validateAttName(name string) error {
	if !utf8.ValidString(name) {
		return badRequest("Attachment name is not UTF-8 encoded")
	}
	if strings.HasPrefix(name, "_") {
		return badRequest("Attachment name '%s' starts with prohibited character '_'", name)
	}
	return nil
}

func (s *Server) putAttachment(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	if err := validateAttName(rt.att); err != nil {
		s.writeError(w, r, err)
		return
	}
	rev, err := requestRev(r, "")
	var doc *couchdoc.Doc
	if err == nil {
		doc, err = currentDoc(r, db, rt.docID, rev)
	}
	var newRev string
	if err == nil {
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			ct = "application/octet-stream"
		}
		if doc.Attachments == nil {
			doc.Attachments = map[string]*couchdoc.Attachment{}
		}
		doc.Attachments[rt.att] = &couchdoc.Attachment{Name: rt.att, ContentType: ct, Length: r.ContentLength, Body: r.Body}
		newRev, err = db.Put(r.Context(), doc)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+newRev+`"`)
	writeJSON(w, http.StatusCreated, okRev{OK: true, ID: rt.docID, Rev: newRev})
}

func (s *Server) deleteAttachment(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	rev, err := requestRev(r, "")
	if err == nil && rev == "" {
		err = couchdoc.ErrConflict
	}
	var doc *couchdoc.Doc
	if err == nil {
		doc, err = currentDoc(r, db, rt.docID, rev)
	}
	var newRev string
	if err == nil {
		if _, ok := doc.Attachments[rt.att]; !ok {
			err = couchdoc.Errorf(couchdoc.ErrNotFound, "Document is missing attachment")
		} else {
			delete(doc.Attachments, rt.att)
			newRev, err = db.Put(r.Context(), doc)
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+newRev+`"`)
	writeJSON(w, http.StatusOK, okRev{OK: true, ID: rt.docID, Rev: newRev})
}
