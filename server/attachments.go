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
		var err error
		if rev, err = couchdoc.CanonRev(rev); err != nil {
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
	if d, ok := strings.CutPrefix(att.Digest, "md5-"); ok {
		h.Set("Content-MD5", d)
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	// An attachment is served as a sandboxed page, never as active content
	// of the server's origin (CouchDB does the same).
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("Accept-Ranges", "bytes")
	ct := att.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	start, n, status := int64(0), att.Length, http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && r.Method == http.MethodGet {
		var ok bool
		if start, n, ok = singleRange(rg, att.Length); !ok {
			start, n = 0, att.Length // several ranges: the whole body (RFC 9110 allows it)
		} else if n < 0 {
			for _, k := range []string{"ETag", "Content-MD5", "Content-Security-Policy", "Accept-Ranges", "Content-Type"} {
				h.Del(k)
			}
			s.writeError(w, r, &couchdoc.Error{Status: http.StatusRequestedRangeNotSatisfiable, Name: "requested_range_not_satisfiable", Reason: "Requested range not satisfiable"})
			return
		} else {
			status = http.StatusPartialContent
			h.Set("Content-Range", "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(start+n-1, 10)+"/"+strconv.FormatInt(att.Length, 10))
		}
	}
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	if start > 0 {
		if _, err := io.CopyN(io.Discard, body, start); err != nil {
			s.log.Warn("write attachment", "err", err)
			return
		}
	}
	if _, err := io.CopyN(w, body, n); err != nil {
		s.log.Warn("write attachment", "err", err)
	}
}

// singleRange reads a Range header naming one byte range of a body of
// size bytes: its start and length, length -1 when it lies beyond the
// end; ok is false for anything but one well-formed range.
func singleRange(header string, size int64) (start, n int64, ok bool) {
	spec, found := strings.CutPrefix(header, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false
	}
	switch {
	case a == "": // the last b bytes
		k, err := strconv.ParseInt(b, 10, 64)
		if err != nil || k <= 0 {
			return 0, 0, false
		}
		k = min(k, size)
		return size - k, k, true
	default:
		from, err := strconv.ParseInt(a, 10, 64)
		if err != nil || from < 0 {
			return 0, 0, false
		}
		to := size - 1
		if b != "" {
			if to, err = strconv.ParseInt(b, 10, 64); err != nil || to < from {
				return 0, 0, false
			}
			to = min(to, size-1)
		}
		if from >= size {
			return 0, -1, true
		}
		return from, to - from + 1, true
	}
}

// currentDoc reads the revision an attachment edit applies to, with its
// attachments as stubs; rev "" means the document must not exist yet.
func currentDoc(r *http.Request, db *localdb.DB, id, rev string) (*couchdoc.Doc, error) {
	if rev == "" {
		return &couchdoc.Doc{ID: id, Body: []byte("{}")}, nil
	}
	rev, err := couchdoc.CanonRev(rev)
	if err != nil {
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

// validateAttNames checks the attachment names of a document as CouchDB
// does for every document written over HTTP (chttpd_db:
// validate_attachment_names), replicated ones and local ones included.
func validateAttNames(doc *couchdoc.Doc) error {
	for name := range doc.Attachments {
		if err := validateAttName(name); err != nil {
			return err
		}
	}
	return nil
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
		newRev, err = s.putChecked(r, db, doc)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setLocation(w, r, rt.db, rt.docID, rt.att)
	writeJSON(w, http.StatusCreated, okRev{OK: true, ID: rt.docID, Rev: newRev})
}

func (s *Server) deleteAttachment(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	err := validateAttName(rt.att)
	var rev string
	if err == nil {
		rev, err = requestRev(r, "")
	}
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
			newRev, err = s.putChecked(r, db, doc)
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, okRev{OK: true, ID: rt.docID, Rev: newRev})
}

// putChecked writes a document read and changed by an attachment request,
// after the checks every document write gets.
func (s *Server) putChecked(r *http.Request, db *localdb.DB, doc *couchdoc.Doc) (string, error) {
	if err := s.checkDocWrite(r, db, doc, true); err != nil {
		return "", err
	}
	rev, err := db.Put(r.Context(), doc)
	if err == nil {
		s.afterWrite(r, doc)
	}
	return rev, err
}
