package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/settee/settee/localdb"
)

// serveAllDocsQueries answers POST /{db}/_all_docs/queries and
// /{db}/_design_docs/queries: {"results": [...]}, one answer per member of
// the body's "queries", each read as the query string of a GET.
func (s *Server) serveAllDocsQueries(w http.ResponseWriter, r *http.Request, db *localdb.DB, design bool) {
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	var body struct {
		Queries []map[string]json.RawMessage `json:"queries"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.writeError(w, r, err)
		return
	}
	if body.Queries == nil {
		s.writeError(w, r, badRequest("`queries` member must be an array"))
		return
	}
	results := make([]json.RawMessage, 0, len(body.Queries))
	for _, q := range body.Queries {
		sub := r.Clone(r.Context())
		sub.Method, sub.Body, sub.ContentLength = http.MethodGet, http.NoBody, 0
		u := *r.URL
		u.RawQuery = queryOfJSON(q).Encode()
		sub.URL = &u
		rec := &bufferedResponse{header: http.Header{}}
		s.serveAllDocs(rec, sub, db, design)
		if rec.status != http.StatusOK {
			for k, v := range rec.header {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.status)
			w.Write(rec.body.Bytes())
			return
		}
		results = append(results, json.RawMessage(bytes.TrimSpace(rec.body.Bytes())))
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// queryOfJSON writes a query object as a query string: strings as they
// are, except the key parameters (JSON in a query string too), other
// values as their JSON. As in CouchDB, keys of one key is that key (the
// answer has an offset).
func queryOfJSON(q map[string]json.RawMessage) url.Values {
	v := url.Values{}
	var one []json.RawMessage
	if json.Unmarshal(q["keys"], &one) == nil && len(one) == 1 && q["key"] == nil {
		q["key"] = one[0]
		delete(q, "keys")
	}
	for k, raw := range q {
		var s string
		switch k {
		case "key", "keys", "startkey", "start_key", "endkey", "end_key":
		default:
			if json.Unmarshal(raw, &s) == nil {
				v.Set(k, s)
				continue
			}
		}
		v.Set(k, string(raw))
	}
	return v
}

// bufferedResponse holds an answer in memory, to be nested in another.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
