package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/validate"
)

// serveBulkDocs is POST /{db}/_bulk_docs. The request is all or nothing as
// to parsing: one malformed document refuses the whole request with 400
// and writes nothing. With new_edits=false only failures are listed, as
// CouchDB does.
// bulkGetError is an item's error in a _bulk_get answer.
type bulkGetError struct {
	Rev    any    `json:"rev"`
	Reason string `json:"reason"`
	ID     any    `json:"id"`
	Error  string `json:"error"`
}

func (s *Server) serveBulkDocs(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	var body struct {
		Docs         []json.RawMessage `json:"docs"`
		NewEdits     *bool             `json:"new_edits"`
		AllOrNothing bool              `json:"all_or_nothing"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Docs == nil {
		s.writeError(w, r, badRequest("POST body must include `docs` parameter."))
		return
	}
	newEdits := body.NewEdits == nil || *body.NewEdits
	docs := make([]*couchdoc.Doc, len(body.Docs))
	for i, raw := range body.Docs {
		doc, err := couchdoc.ParseDoc(raw)
		if err != nil && !newEdits {
			if fixed, ok := revisionsWin(raw); ok {
				doc, err = couchdoc.ParseDoc(fixed)
			}
		}
		if err == nil {
			err = checkBulkDoc(doc, newEdits)
			inlineDigestsIgnored(doc)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		docs[i] = doc
	}
	if body.AllOrNothing {
		// As CouchDB 3: refused, each document named, nothing written.
		out := make([]map[string]string, len(docs))
		for i, d := range docs {
			out[i] = map[string]string{"id": d.ID, "rev": d.Rev, "error": "not_implemented", "reason": "all_or_nothing is not supported"}
			if d.Rev == "" {
				out[i]["rev"] = "0-"
			}
		}
		writeJSON(w, http.StatusExpectationFailed, out)
		return
	}
	results := make([]couchdoc.DocResult, len(docs))
	// One read of the validate_doc_update functions for the whole batch.
	r = r.WithContext(validate.WithBatch(r.Context()))
	var batch []*couchdoc.Doc
	var where []int
	for i, doc := range docs {
		if err := s.checkDocWrite(r, db, doc, newEdits); err != nil {
			// Refused documents are answered in place, as CouchDB's
			// per-document validation errors.
			rev := ""
			if !newEdits {
				rev = doc.Rev
			}
			results[i] = docResult(doc.ID, rev, err)
			continue
		}
		if !couchdoc.IsLocalID(doc.ID) {
			batch = append(batch, doc)
			where = append(where, i)
			continue
		}
		rev, err := db.PutLocal(r.Context(), doc)
		results[i] = docResult(doc.ID, rev, err)
	}
	if len(batch) > 0 {
		res, err := db.BulkDocs(r.Context(), batch, newEdits)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for j, rr := range res {
			if j < len(where) {
				results[where[j]] = rr
				if rr.Error == "" {
					s.afterWrite(r, batch[j])
				}
			}
		}
	}
	out := results
	if !newEdits {
		out = []couchdoc.DocResult{}
		for _, rr := range results {
			if rr.Error == couchdoc.ErrMissingStub.Name {
				// CouchDB fails the whole replicated batch on a stub it
				// cannot resolve, so the replicator retries it whole.
				writeJSON(w, http.StatusPreconditionFailed, map[string]string{"error": rr.Error, "reason": rr.Reason})
				return
			}
			if rr.Error != "" {
				out = append(out, rr)
			}
		}
	}
	writeJSON(w, http.StatusCreated, out)
}

// revisionsWin rewrites a replicated document whose _rev disagrees with
// its _revisions so that _revisions names the revision, as CouchDB does
// when it takes such a document with new_edits=false (its history is what
// gets stored). ok is false when there is no usable _revisions. Only the
// failure path of parsing comes here.
func revisionsWin(raw json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	var r couchdoc.Revisions
	if json.Unmarshal(raw, &m) != nil || m["_revisions"] == nil || json.Unmarshal(m["_revisions"], &r) != nil ||
		r.Start < 1 || len(r.IDs) == 0 {
		return nil, false
	}
	id, ok := couchdoc.CanonRevID(r.IDs[0])
	if !ok {
		return nil, false
	}
	rev, _ := json.Marshal(couchdoc.FormatRev(r.Start, id))
	if string(rev) == string(m["_rev"]) {
		return nil, false
	}
	m["_rev"] = rev
	out, err := json.Marshal(m)
	return out, err == nil
}

// checkBulkDoc validates one document of _bulk_docs, giving it an id if
// it has none (new_edits=true only).
func checkBulkDoc(doc *couchdoc.Doc, newEdits bool) error {
	if doc.ID == "" {
		if !newEdits {
			return badRequest("new_edits=false needs every document's _id")
		}
		doc.ID = newUUID()
	}
	if err := couchdoc.ValidateDocID(doc.ID); err != nil {
		return err
	}
	if !newEdits && !couchdoc.IsLocalID(doc.ID) {
		if doc.Rev == "" {
			return badRequest("new_edits=false needs every document's _rev")
		}
		if _, _, err := couchdoc.ParseRev(doc.Rev); err != nil {
			return err
		}
	}
	if err := validateAttNames(doc); err != nil {
		return err
	}
	for name, a := range doc.Attachments {
		if a.Follows {
			return badRequest("attachment %q: \"follows\" needs a multipart request", name)
		}
	}
	return nil
}

func docResult(id, rev string, err error) couchdoc.DocResult {
	if err == nil {
		return couchdoc.DocResult{ID: id, Rev: rev, OK: true}
	}
	// A refused replicated document names its rev, as CouchDB's does.
	ce := toCouchError(err)
	return couchdoc.DocResult{ID: id, Rev: rev, Error: ce.Name, Reason: ce.Reason, ReasonJSON: ce.ReasonJSON}
}

// serveRevsDiff is POST /{db}/_revs_diff.
func (s *Server) serveRevsDiff(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	res, ok := s.revsDiff(w, r, db)
	if !ok {
		return
	}
	if res == nil {
		res = map[string]couchdoc.RevsDiffResult{}
	}
	writeJSON(w, http.StatusOK, res)
}

// revsDiff reads the {id: [revs]} body of POST _revs_diff or
// _missing_revs and compares it with db; ok is false when it answered
// the request with an error.
func (s *Server) revsDiff(w http.ResponseWriter, r *http.Request, db *localdb.DB) (res map[string]couchdoc.RevsDiffResult, ok bool) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return nil, false
	}
	var req map[string][]string
	if err := decodeJSONBody(r, &req); err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	for id, revs := range req {
		if id == "" {
			s.writeError(w, r, badRequest("Document id must not be empty"))
			return nil, false
		}
		for _, rev := range revs {
			if _, _, err := couchdoc.ParseRev(rev); err != nil {
				s.writeError(w, r, err)
				return nil, false
			}
		}
	}
	res, err := db.RevsDiff(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	return res, true
}

// bulkGetItem is one requested revision of _bulk_get.
type bulkGetItem struct {
	ID        string   `json:"id"`
	Rev       string   `json:"rev"`
	AttsSince []string `json:"atts_since"`
}

// serveBulkGet is POST /{db}/_bulk_get: JSON by default, multipart/mixed
// when the client accepts it.
func (s *Server) serveBulkGet(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	q := newQuery(r.URL)
	base := bulkGetOptions(q)
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	var body struct {
		Docs []bulkGetItem `json:"docs"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Docs == nil {
		s.writeError(w, r, badRequest("Missing JSON list of 'docs'."))
		return
	}
	canonBulkGetRevs(body.Docs)
	mixed := accepts(r, wire.TypeMixed)
	// As with open_revs, a multipart answer carries attachment bodies.
	base.Attachments = base.Attachments || mixed
	bw := bufio.NewWriterSize(w, responseBuffer)
	defer bw.Flush()
	var mw *wire.MixedWriter
	if mixed {
		mw = wire.NewMixedWriter(bw)
		mw.DocHeaders = true
		w.Header().Set("Content-Type", mw.ContentType())
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	if !mixed {
		bw.Write([]byte(`{"results":[`))
	}
	n := 0
	view := s.replicatorView(r)
	write := func(item bulkGetItem, docs []*couchdoc.Doc, errs []error) error {
		viewDocs(view, docs...)
		var err error
		if mixed {
			err = writeBulkGetMixed(mw, item, docs, errs)
		} else {
			if n > 0 {
				bw.Write([]byte(","))
			}
			err = writeBulkGetJSON(bw, item, docs, errs)
		}
		n++
		for _, d := range docs {
			closeBodies(d)
		}
		return err
	}
	if err := s.bulkGetItems(r, db, body.Docs, base, write); err != nil {
		s.log.Warn("write _bulk_get", "err", err)
		return
	}
	if mixed {
		_ = mw.Close()
	} else {
		bw.Write([]byte("]}\n"))
	}
}

// responseBuffer sizes the buffer between a streamed answer (_bulk_get, a
// normal or longpoll _changes) and the connection: net/http's own are 2-4
// KB, so a pull's answers went out in many small writes, a system call on
// each end of the connection for each (the bench's 100k pull).
const responseBuffer = 64 << 10

// bulkGetItems answers items in order: runs of items naming a revision
// with OpenRevsBatch (many documents per read transaction), the others one
// at a time. It stops at the first error writing the answer.
func (s *Server) bulkGetItems(r *http.Request, db *localdb.DB, items []bulkGetItem, base localdb.GetOptions, write func(bulkGetItem, []*couchdoc.Doc, []error) error) error {
	var run []bulkGetItem
	flushRun := func() error {
		if len(run) == 0 {
			return nil
		}
		err := s.bulkGetRun(r, db, run, base, write)
		run = run[:0]
		return err
	}
	for _, item := range items {
		if !batchable(item, base) {
			if err := flushRun(); err != nil {
				return err
			}
			docs, errs := s.bulkGetOne(r, db, item, base)
			if err := write(item, docs, errs); err != nil {
				return err
			}
			continue
		}
		// Answers are told apart by id: never two of one id in a row.
		if len(run) > 0 && run[len(run)-1].ID == item.ID {
			if err := flushRun(); err != nil {
				return err
			}
		}
		run = append(run, item)
	}
	return flushRun()
}

// canonBulkGetRevs puts the revs of _bulk_get's items as CouchDB keeps
// them (couchdoc.CanonRev), as its answers name them; a rev it refuses
// stays as sent, for the item's error entry.
func canonBulkGetRevs(items []bulkGetItem) {
	for i := range items {
		if c, err := couchdoc.CanonRev(items[i].Rev); err == nil {
			items[i].Rev = c
		}
		for k, a := range items[i].AttsSince {
			if c, err := couchdoc.CanonRev(a); err == nil {
				items[i].AttsSince[k] = c
			}
		}
	}
}

// bulkGetOptions reads _bulk_get's query parameters.
func bulkGetOptions(q *query) localdb.GetOptions {
	return localdb.GetOptions{Revs: q.bool("revs"), Attachments: q.bool("attachments"), Latest: q.bool("latest")}
}

// batchable tells an item bulkGetRun can answer: a valid id and rev, and
// no atts_since that would turn attachments on for it alone.
func batchable(item bulkGetItem, base localdb.GetOptions) bool {
	if item.Rev == "" || (len(item.AttsSince) > 0 && !base.Attachments) {
		return false
	}
	if couchdoc.ValidateDocID(item.ID) != nil {
		return false
	}
	_, _, err := couchdoc.ParseRev(item.Rev)
	return err == nil
}

// bulkGetRun answers a run of batchable items, no two consecutive ones of
// the same id, with one OpenRevsBatch call, writing each item's answers
// as soon as the next item's begin.
func (s *Server) bulkGetRun(r *http.Request, db *localdb.DB, run []bulkGetItem, base localdb.GetOptions, write func(bulkGetItem, []*couchdoc.Doc, []error) error) error {
	reqs := make([]localdb.RevsRequest, len(run))
	for i, item := range run {
		reqs[i] = localdb.RevsRequest{ID: item.ID, Revs: []string{item.Rev}, AttsSince: item.AttsSince}
	}
	i := -1
	var docs []*couchdoc.Doc
	var errs []error
	flush := func() error {
		if i < 0 {
			return nil
		}
		err := write(run[i], docs, errs)
		docs, errs = nil, nil
		return err
	}
	err := db.OpenRevsBatch(r.Context(), reqs, base, func(id string, o localdb.OpenRev, err error) error {
		if i < 0 || id != run[i].ID {
			if ferr := flush(); ferr != nil {
				closeBodies(o.Doc)
				return ferr
			}
			i++
		}
		switch {
		case err != nil:
			errs = append(errs, err)
		case o.Doc != nil:
			docs = append(docs, o.Doc)
		default:
			errs = append(errs, couchdoc.Errorf(couchdoc.ErrNotFound, "missing"))
		}
		return nil
	})
	if err != nil {
		for _, d := range docs {
			closeBodies(d)
		}
		return err
	}
	return flush()
}

// bulkGetOne fetches one requested revision, or every leaf (in CouchDB's
// order, the tombstone of a deleted doc included) when no rev is named.
func (s *Server) bulkGetOne(r *http.Request, db *localdb.DB, item bulkGetItem, base localdb.GetOptions) ([]*couchdoc.Doc, []error) {
	opts := base
	// As CouchDB: a non-empty atts_since sends the bodies of attachments
	// newer than it even with attachments=false (its replicator relies on
	// it); an empty one changes nothing.
	opts.AttsSince = item.AttsSince
	opts.Attachments = base.Attachments || len(item.AttsSince) > 0
	if item.ID == "" {
		return nil, []error{badRequest("document id missed")}
	}
	if err := couchdoc.ValidateDocID(item.ID); err != nil {
		return nil, []error{err}
	}
	var revs []string
	if item.Rev != "" {
		if _, _, err := couchdoc.ParseRev(item.Rev); err != nil {
			return nil, []error{badRequest("Invalid rev format")}
		}
		revs = []string{item.Rev}
	}
	res, err := db.OpenRevs(r.Context(), item.ID, revs, opts)
	if err != nil {
		return nil, []error{err}
	}
	if revs == nil {
		sortLeaves(res)
	}
	var docs []*couchdoc.Doc
	var errs []error
	for _, o := range res {
		if o.Doc != nil {
			docs = append(docs, o.Doc)
		} else {
			errs = append(errs, couchdoc.Errorf(couchdoc.ErrNotFound, "missing"))
		}
	}
	return docs, errs
}

// errorIDRev is what CouchDB names an item by in its error entries: a
// missing id is null (and so is the rev then), a missing rev the string
// "undefined".
func (item bulkGetItem) errorIDRev() (id, rev any) {
	switch {
	case item.ID == "":
		return nil, nil
	case item.Rev == "":
		return item.ID, "undefined"
	}
	return item.ID, item.Rev
}

func writeBulkGetJSON(w io.Writer, item bulkGetItem, docs []*couchdoc.Doc, errs []error) error {
	jid, _ := item.errorIDRev()
	idJSON, _ := jsonMarshal(jid)
	if _, err := w.Write([]byte(`{"id":` + string(idJSON) + `,"docs":[`)); err != nil {
		return err
	}
	n := 0
	for _, d := range docs {
		if n > 0 {
			w.Write([]byte(","))
		}
		n++
		w.Write([]byte(`{"ok":`))
		if err := writeDocJSON(w, d); err != nil {
			return err
		}
		w.Write([]byte("}"))
	}
	for _, e := range errs {
		if n > 0 {
			w.Write([]byte(","))
		}
		n++
		ce := toCouchError(e)
		id, rev := item.errorIDRev()
		// CouchDB's order of the members.
		b, _ := jsonMarshal(struct {
			Error bulkGetError `json:"error"`
		}{bulkGetError{Rev: rev, Reason: ce.Reason, ID: id, Error: ce.Name}})
		w.Write(b)
	}
	_, err := w.Write([]byte("]}"))
	return err
}

func writeBulkGetMixed(mw *wire.MixedWriter, item bulkGetItem, docs []*couchdoc.Doc, errs []error) error {
	for _, d := range docs {
		if err := mw.WriteDoc(d); err != nil {
			return err
		}
	}
	for _, e := range errs {
		rev := item.Rev
		if rev == "" {
			rev = "undefined"
		}
		if err := mw.WriteRevError(item.ID, rev, toCouchError(e)); err != nil {
			return err
		}
	}
	return nil
}
