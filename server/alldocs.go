package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// errKeysAndKey is CouchDB's answer to keys given with key, start_key or
// end_key.
var errKeysAndKey = &couchdoc.Error{Status: http.StatusBadRequest, Name: "query_parse_error",
	Reason: "`keys` is incompatible with `key`, `start_key` and `end_key`"}

// allDocsParams are _all_docs' options and what the store does not see:
// whether include_docs inlines attachment bodies.
type allDocsParams struct {
	localdb.AllDocsOptions
	attachments bool
}

// parseAllDocs reads _all_docs' parameters from the query and, for POST,
// the body's "keys".
func parseAllDocs(r *http.Request) (allDocsParams, error) {
	q := newQuery(r.URL)
	var p allDocsParams
	o := &p.AllDocsOptions
	var ranged []string // the values of key, start_key and end_key given
	strKey := func(names ...string) string {
		for _, n := range names {
			var s string
			if q.has(n) && q.json(n, &s) {
				ranged = append(ranged, s)
				return s
			}
		}
		return ""
	}
	o.StartKey = strKey("startkey", "start_key")
	o.EndKey = strKey("endkey", "end_key")
	if q.has("key") {
		o.StartKey = strKey("key")
		o.EndKey = o.StartKey
	}
	if q.has("keys") {
		q.json("keys", &o.Keys)
		if o.Keys == nil && q.err == nil {
			o.Keys = []string{}
		}
	}
	o.Limit = int(q.int("limit", 0))
	if q.has("limit") && o.Limit == 0 {
		o.Limit = -1 // limit=0: no rows
	}
	o.Skip = int(q.int("skip", 0))
	o.Descending = q.bool("descending")
	o.IncludeDocs = q.bool("include_docs")
	p.attachments = o.IncludeDocs && q.bool("attachments")
	o.Conflicts = q.bool("conflicts")
	o.ExclusiveEnd = !q.boolDefault("inclusive_end", true)
	if q.err != nil {
		return p, q.err
	}
	if r.Method == http.MethodPost {
		var body struct {
			Keys []string `json:"keys"`
		}
		if err := decodeJSONBody(r, &body); err != nil {
			return p, err
		}
		if body.Keys == nil {
			return p, badRequest("`keys` body member must be an array.")
		}
		o.Keys = body.Keys
	}
	if len(o.Keys) > 0 && len(ranged) > 0 {
		// CouchDB takes keys=[K] as key=K, so only that one key may
		// come with it.
		for _, k := range ranged {
			if len(o.Keys) > 1 || k != o.Keys[0] {
				return p, errKeysAndKey
			}
		}
	}
	return p, nil
}

// serveAllDocs is GET|POST /{db}/_all_docs, and /{db}/_design_docs (the
// same over the design documents' range), streamed row by row.
func (s *Server) serveAllDocs(w http.ResponseWriter, r *http.Request, db *localdb.DB, design bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("GET,HEAD,POST"))
		return
	}
	p, err := parseAllDocs(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	o := p.AllDocsOptions
	if design {
		lo, hi := "_design/", "_design0"
		if o.Descending {
			lo, hi = hi, lo
		}
		if o.StartKey == "" || (o.StartKey < lo) != o.Descending {
			o.StartKey = lo
		}
		if o.EndKey == "" || (o.EndKey > hi) != o.Descending {
			o.EndKey, o.ExclusiveEnd = hi, true
		}
	}
	// The offset of a range is the rows before its start, as in CouchDB;
	// rows asked for by keys have none (null).
	offset, hasOffset := int64(0), false
	if o.Keys == nil {
		n := int64(0)
		if o.StartKey != "" {
			if n, err = db.AllDocsOffset(r.Context(), o.StartKey, o.Descending); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		offset, hasOffset = n+int64(o.Skip), true
	}
	updateSeq := ""
	if q := newQuery(r.URL); q.bool("update_seq") {
		info, err := db.Info(r.Context())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		updateSeq = `,"update_seq":` + strconv.FormatInt(info.UpdateSeq, 10)
	}
	noRows := o.Limit < 0
	if noRows {
		o.Limit = 0
	}
	bw := bufio.NewWriter(w)
	started, n := false, 0
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "must-revalidate")
			w.WriteHeader(http.StatusOK)
			bw.WriteString(`{"rows":[`)
		}
	}
	view := s.replicatorView(r)
	row := func(row *localdb.AllDocsRow) error {
		if noRows {
			return nil
		}
		start()
		if n > 0 {
			bw.WriteString(",\n")
		} else {
			bw.WriteString("\n")
		}
		n++
		key, _ := jsonMarshal(row.ID)
		if row.Error != "" {
			errJSON, _ := jsonMarshal(row.Error)
			bw.WriteString(`{"key":` + string(key) + `,"error":` + string(errJSON) + `}`)
			return nil
		}
		rev, _ := jsonMarshal(row.Rev)
		bw.WriteString(`{"id":` + string(key) + `,"key":` + string(key) + `,"value":{"rev":` + string(rev))
		if row.Deleted {
			bw.WriteString(`,"deleted":true`)
		}
		bw.WriteString("}")
		if o.IncludeDocs {
			bw.WriteString(`,"doc":`)
			switch {
			case row.Doc == nil || row.Deleted:
				bw.WriteString("null")
			case p.attachments && len(row.Doc.Attachments) > 0:
				if err := writeInlineDoc(r.Context(), bw, db, row.Doc, o.Conflicts, view); err != nil {
					return err
				}
			default:
				viewDocs(view, row.Doc)
				b, err := row.Doc.MarshalJSON()
				if err != nil {
					return err
				}
				bw.Write(b)
			}
		}
		bw.WriteString("}")
		return nil
	}
	total, err := db.AllDocs(r.Context(), o, row)
	if err == nil && design {
		total, err = db.DesignDocCount(r.Context())
	}
	if err != nil {
		if !started {
			s.writeError(w, r, err)
			return
		}
		s.log.Warn("_all_docs", "err", err)
		bw.Flush()
		return
	}
	// CouchDB counts _design_docs' offset over the whole database but
	// never past its total_rows (the design documents).
	if design && offset > total {
		offset = total
	}
	offsetJSON := "null"
	if hasOffset {
		offsetJSON = strconv.FormatInt(offset, 10)
	}
	start()
	bw.WriteString("\n],\"total_rows\":" + strconv.FormatInt(total, 10) + ",\"offset\":" + offsetJSON + updateSeq + "}\n")
	bw.Flush()
}

// writeInlineDoc writes a document read again with its attachment bodies
// inline (base64 "data" instead of stubs), as attachments=true asks.
func writeInlineDoc(ctx context.Context, w io.Writer, db *localdb.DB, doc *couchdoc.Doc, conflicts bool, view func(*couchdoc.Doc)) error {
	full, err := db.Get(ctx, doc.ID, localdb.GetOptions{Rev: doc.Rev, Attachments: true, Conflicts: conflicts})
	if err != nil {
		return err
	}
	defer closeBodies(full)
	viewDocs(view, full)
	return writeDocJSON(w, full)
}

// serveLocalDocs is GET /{db}/_local_docs: every local document, with
// CouchDB's null total_rows and offset.
func (s *Server) serveLocalDocs(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed("GET,HEAD"))
		return
	}
	q := newQuery(r.URL)
	includeDocs := q.bool("include_docs")
	if q.err != nil {
		s.writeError(w, r, q.err)
		return
	}
	var rows [][]byte
	err := db.LocalDocs(r.Context(), func(doc *couchdoc.Doc) error {
		id, _ := jsonMarshal(doc.ID)
		rev, _ := jsonMarshal(doc.Rev)
		row := `{"id":` + string(id) + `,"key":` + string(id) + `,"value":{"rev":` + string(rev) + `}`
		if includeDocs {
			b, err := doc.MarshalJSON()
			if err != nil {
				return err
			}
			row += `,"doc":` + string(b)
		}
		rows = append(rows, []byte(row+"}"))
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "must-revalidate")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"total_rows":null,"offset":null,"rows":[`)
	for i, row := range rows {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
		bw.Write(row)
	}
	bw.WriteString("\n]}\n")
	bw.Flush()
}
