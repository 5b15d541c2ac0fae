package server

import (
	"mime"
	"net/http"
	"sort"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
)

// serveDoc is GET|HEAD|PUT|DELETE /{db}/{docid}.
func (s *Server) serveDoc(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	if err := couchdoc.ValidateDocID(rt.docID); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.getDoc(w, r, rt.docID, db)
	case http.MethodPut:
		s.putDoc(w, r, rt.docID, db)
	case http.MethodDelete:
		s.deleteDoc(w, r, rt.docID, db)
	case "COPY":
		s.copyDoc(w, r, rt, db)
	default:
		s.writeError(w, r, methodNotAllowed("COPY,DELETE,GET,HEAD,PUT"))
	}
}

// accepts reports whether the Accept header names the media type.
func accepts(r *http.Request, mediaType string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && mt == mediaType {
			return true
		}
	}
	return false
}

// acceptsAny is how CouchDB negotiates a document's answer: a missing
// Accept header, "*/*" and "multipart/*" accept the media type too (an
// explicit "application/json" still gets JSON).
func acceptsAny(r *http.Request, mediaType string) bool {
	h := r.Header.Get("Accept")
	if strings.TrimSpace(h) == "" {
		return true
	}
	major, _, _ := strings.Cut(mediaType, "/")
	for _, part := range strings.Split(h, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && (mt == mediaType || mt == "*/*" || mt == major+"/*") {
			return true
		}
	}
	return false
}

func (s *Server) getDoc(w http.ResponseWriter, r *http.Request, id string, db *localdb.DB) {
	q := newQuery(r.URL)
	opts := q.getOptions()
	if q.has("open_revs") {
		s.getOpenRevs(w, r, id, db, q, opts)
		return
	}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	doc, err := db.Get(r.Context(), id, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer closeBodies(doc)
	viewDocs(s.replicatorView(r), doc)
	etag := `"` + doc.Rev + `"`
	// Like CouchDB, no ETag when the answer carries more than the revision
	// (conflicts, revs_info or a local seq that change without a new rev);
	// asking for conflicts a document does not have adds nothing.
	if !opts.RevsInfo && len(doc.Conflicts) == 0 && len(doc.DeletedConflicts) == 0 && !opts.LocalSeq {
		w.Header().Set("ETag", etag)
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		return
	}
	if hasBodies(doc) && acceptsAny(r, wire.TypeRelated) {
		rel, err := wire.NewRelated(doc)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", rel.ContentType())
		w.WriteHeader(http.StatusOK)
		if _, err := rel.WriteTo(w); err != nil {
			s.log.Warn("write document", "err", err)
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err := writeDocJSON(w, doc); err != nil {
		s.log.Warn("write document", "err", err)
	}
}

// getOpenRevs answers open_revs=all|[revs]: a JSON array of {"ok": doc}
// and {"missing": rev}, or multipart/mixed when the client accepts it.
func (s *Server) getOpenRevs(w http.ResponseWriter, r *http.Request, id string, db *localdb.DB, q *query, opts localdb.GetOptions) {
	var revs []string
	if q.str("open_revs") != "all" {
		revs = q.revList("open_revs")
		if revs == nil && q.err == nil {
			revs = []string{}
		}
	}
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	opts.Rev = ""
	mixed := acceptsAny(r, wire.TypeMixed)
	// CouchDB sends attachment bodies in a multipart answer whether or not
	// attachments=true was asked (atts_since still trims them): its own
	// replicator relies on it and cannot write stubs it does not have.
	opts.Attachments = opts.Attachments || mixed
	results, err := db.OpenRevs(r.Context(), id, revs, opts)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if revs == nil {
		sortLeaves(results)
	}
	view := s.replicatorView(r)
	for _, res := range results {
		viewDocs(view, res.Doc)
	}
	defer func() {
		for _, res := range results {
			closeBodies(res.Doc)
		}
	}()
	if mixed {
		mw := wire.NewMixedWriter(w)
		w.Header().Set("Content-Type", mw.ContentType())
		w.WriteHeader(http.StatusOK)
		for _, res := range results {
			if res.Doc == nil {
				err = mw.WriteMissing(res.Missing)
			} else {
				err = mw.WriteDoc(res.Doc)
			}
			if err != nil {
				s.log.Warn("write open_revs", "err", err)
				return
			}
		}
		_ = mw.Close()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("["))
	for i, res := range results {
		if i > 0 {
			w.Write([]byte(","))
		}
		if res.Doc == nil {
			b, _ := jsonMarshal(map[string]string{"missing": res.Missing})
			w.Write(b)
			continue
		}
		w.Write([]byte(`{"ok":`))
		if err := writeDocJSON(w, res.Doc); err != nil {
			s.log.Warn("write open_revs", "err", err)
			return
		}
		w.Write([]byte("}"))
	}
	w.Write([]byte("]\n"))
}

// sortLeaves puts open_revs=all's leaves in CouchDB's order: by
// generation, then by rev id.
func sortLeaves(results []localdb.OpenRev) {
	sort.Slice(results, func(i, j int) bool {
		a, b := results[i].Doc, results[j].Doc
		if a == nil || b == nil {
			return b != nil
		}
		ga, ha, _ := couchdoc.ParseRev(a.Rev)
		gb, hb, _ := couchdoc.ParseRev(b.Rev)
		if ga != gb {
			return ga < gb
		}
		return couchdoc.CompareRevIDs(ha, hb) < 0
	})
}

// requestRev reconciles the rev of ?rev=, If-Match and the body's _rev
// (each as CouchDB keeps it, couchdoc.CanonRev); two that differ are a 400.
func requestRev(r *http.Request, bodyRev string) (string, error) {
	rev := bodyRev
	for _, other := range []string{r.URL.Query().Get("rev"), strings.Trim(r.Header.Get("If-Match"), `"`)} {
		if other == "" {
			continue
		}
		other, err := couchdoc.CanonRev(other)
		if err != nil {
			return "", err
		}
		if rev != "" && rev != other {
			return "", badRequest("Document rev from request body and query string have different values")
		}
		rev = other
	}
	return rev, nil
}

func (s *Server) putDoc(w http.ResponseWriter, r *http.Request, id string, db *localdb.DB) {
	q := newQuery(r.URL)
	newEdits := q.boolDefault("new_edits", true)
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	var rev string
	var err error
	if mt == wire.TypeRelated {
		seen := false
		var writeErr error
		err = wire.ReadMultipart(r.Body, ct, func(doc *couchdoc.Doc, revErr error) error {
			if revErr != nil {
				return revErr
			}
			if seen {
				return badRequest("multipart/related body holds more than one document")
			}
			seen = true
			rev, writeErr = s.writeDoc(r, db, id, doc, newEdits)
			return writeErr
		})
		switch {
		case err == nil && !seen:
			err = badRequest("multipart/related body holds no document")
		case err != nil && err != writeErr:
			err = requestBodyError("multipart/related", err)
		}
	} else {
		var body []byte
		body, err = readBody(r)
		if err == nil {
			var doc *couchdoc.Doc
			doc, err = couchdoc.ParseDoc(body)
			if err == nil {
				rev, err = s.writeDoc(r, db, id, doc, newEdits)
			}
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+rev+`"`)
	setLocation(w, r, dbName(r), id, "")
	writeJSON(w, http.StatusCreated, okRev{OK: true, ID: id, Rev: rev})
}

// writeDoc stores one document under the URL's id.
func (s *Server) writeDoc(r *http.Request, db *localdb.DB, id string, doc *couchdoc.Doc, newEdits bool) (string, error) {
	doc.ID = id
	rev, err := requestRev(r, doc.Rev)
	if err != nil {
		return "", err
	}
	doc.Rev = rev
	return s.storeDoc(r, db, doc, newEdits)
}

// inlineDigestsIgnored drops the digest a document's JSON states for an
// attachment whose bytes travel inline: CouchDB takes inline data as new
// bytes whatever digest, length or revpos came with it
// (couch_att:inline_from_json), which is what a PouchDB app sends after it
// replaced an attachment's data in a document it read. The store then
// digests the bytes itself.
func inlineDigestsIgnored(doc *couchdoc.Doc) {
	for _, a := range doc.Attachments {
		if !a.Stub && a.Data != nil && a.Body == nil {
			a.Digest = ""
		}
	}
}

// storeDoc writes one document with new_edits true (Put) or false.
func (s *Server) storeDoc(r *http.Request, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) (string, error) {
	rev, err := s.storeDocChecked(r, db, doc, newEdits)
	if err == nil {
		s.afterWrite(r, doc)
	}
	return rev, err
}

func (s *Server) storeDocChecked(r *http.Request, db *localdb.DB, doc *couchdoc.Doc, newEdits bool) (string, error) {
	ctx := r.Context()
	if err := validateAttNames(doc); err != nil {
		return "", err
	}
	if err := s.checkDocWrite(r, db, doc, newEdits); err != nil {
		return "", err
	}
	inlineDigestsIgnored(doc)
	if doc.Rev != "" {
		if _, _, err := couchdoc.ParseRev(doc.Rev); err != nil {
			return "", err
		}
	}
	if !newEdits && doc.Rev == "" {
		return "", badRequest("new_edits=false needs a _rev")
	}
	if newEdits {
		return db.Put(ctx, doc)
	}
	res, err := db.BulkDocs(ctx, []*couchdoc.Doc{doc}, false)
	if err != nil {
		return "", err
	}
	if len(res) == 1 {
		if err := res[0].Err(); err != nil {
			return "", err
		}
	}
	return doc.Rev, nil
}

func (s *Server) deleteDoc(w http.ResponseWriter, r *http.Request, id string, db *localdb.DB) {
	rev, err := requestRev(r, "")
	if err == nil && rev == "" {
		err = couchdoc.ErrConflict
	}
	if err == nil {
		_, _, err = couchdoc.ParseRev(rev)
	}
	var newRev string
	if err == nil {
		err = s.checkDocWrite(r, db, &couchdoc.Doc{ID: id, Rev: rev, Deleted: true}, true)
	}
	if err == nil {
		newRev, err = db.Delete(r.Context(), id, rev)
	}
	if err == nil {
		s.afterWrite(r, &couchdoc.Doc{ID: id, Rev: newRev, Deleted: true})
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+newRev+`"`)
	writeJSON(w, http.StatusOK, okRev{OK: true, ID: id, Rev: newRev})
}

// postDoc is POST /{db}: create a document, generating its id if missing.
func (s *Server) postDoc(w http.ResponseWriter, r *http.Request, rt route, db *localdb.DB) {
	body, err := readBody(r)
	var doc *couchdoc.Doc
	if err == nil {
		doc, err = couchdoc.ParseDoc(body)
	}
	if err == nil && doc.ID == "" {
		doc.ID = newUUID()
	}
	if err == nil {
		err = couchdoc.ValidateDocID(doc.ID)
	}
	if err == nil && couchdoc.IsLocalID(doc.ID) {
		err = badRequest("use PUT /{db}/_local/{id} for local documents")
	}
	var rev string
	if err == nil {
		rev, err = s.storeDoc(r, db, doc, true)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setLocation(w, r, rt.db, doc.ID, "")
	writeJSON(w, http.StatusCreated, okRev{OK: true, ID: doc.ID, Rev: rev})
}
