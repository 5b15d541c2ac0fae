package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server/access"
)

// CouchDB 3.5's default bounds of one _purge request ([purge]
// max_document_id_number and max_revisions_number).
const (
	maxPurgeIDs  = 100
	maxPurgeRevs = 1000
)

// servePurge is POST /{db}/_purge, as CouchDB 3.5 answers it: 201 with
// {"purge_seq": null, "purged": {id: [revs removed]}}, ids in request order.
func (s *Server) servePurge(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if dbName(r) == access.UsersDB {
		defer s.forgetUsers() // a purged user is gone for good
	}
	if r.Method != http.MethodPost {
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	b, err := readJSONRequest(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ids, req, err := parsePurge(b)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	purged, err := db.Purge(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var out bytes.Buffer
	out.WriteString(`{"purge_seq":null,"purged":{`)
	for i, id := range ids {
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(id)
		v, _ := json.Marshal(purged[id])
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteString("}}")
	writeJSON(w, http.StatusCreated, json.RawMessage(out.Bytes()))
}

// parsePurge reads a purge request, an object of id -> [rev], keeping the
// ids' order (the answer lists them in it). It checks what CouchDB checks
// before purging anything: an object, lists of well formed revs, and the
// request's bounds.
func parsePurge(b []byte) ([]string, map[string][]string, error) {
	if !json.Valid(b) {
		var v any
		return nil, nil, decodeJSON(b, &v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		return nil, nil, badRequest("Request body must be a JSON object")
	}
	var ids []string
	req := make(map[string][]string)
	nrevs := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, badRequest("invalid JSON")
		}
		id := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, badRequest("invalid JSON")
		}
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil || list == nil {
			return nil, nil, badRequest("Invalid list of revisions")
		}
		revs := make([]string, 0, len(list))
		for _, e := range list {
			var rev string
			if err := json.Unmarshal(e, &rev); err != nil {
				return nil, nil, badRequest("Invalid rev format")
			}
			if !localdb.RevShape(rev) {
				return nil, nil, badRequest("Invalid rev format")
			}
			revs = append(revs, rev)
		}
		if _, dup := req[id]; !dup {
			ids = append(ids, id)
		}
		req[id] = append(req[id], revs...)
		nrevs += len(revs)
	}
	if _, err := dec.Token(); err != nil || dec.More() {
		return nil, nil, badRequest("invalid JSON")
	}
	if len(ids) > maxPurgeIDs {
		return nil, nil, badRequest("Exceeded maximum number of documents.")
	}
	if nrevs > maxPurgeRevs {
		return nil, nil, badRequest("Exceeded maximum number of revisions.")
	}
	return ids, req, nil
}

// servePurgedInfos is GET /{db}/_purged_infos: the kept purge records.
// CouchDB merges its shards' records into a set, so it answers them
// without duplicates, in Erlang term order: by id, then by revisions.
func (s *Server) servePurgedInfos(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if r.Method != http.MethodGet {
		s.writeError(w, r, methodNotAllowed("GET"))
		return
	}
	infos, err := db.PurgedInfos(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	type info struct {
		ID   string   `json:"id"`
		Revs []string `json:"revs"`
	}
	sort.SliceStable(infos, func(i, j int) bool { return purgedInfoLess(infos[i], infos[j]) })
	out := make([]info, 0, len(infos))
	for i, pi := range infos {
		if i > 0 && !purgedInfoLess(infos[i-1], pi) {
			continue // the same id and revisions as the one before
		}
		out = append(out, info{pi.ID, pi.Revs})
	}
	writeJSON(w, http.StatusOK, map[string]any{"purged_infos": out})
}

// servePurgedInfosLimit is GET|PUT /{db}/_purged_infos_limit.
func (s *Server) servePurgedInfosLimit(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	switch r.Method {
	case http.MethodGet:
		n, err := db.PurgedInfosLimit(r.Context())
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, n)
	case http.MethodPut:
		b, err := readBody(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		var n int64
		if json.Unmarshal(bytes.TrimSpace(b), &n) != nil || n <= 0 {
			s.writeError(w, r, badRequest("`purged_infos_limit` must be positive integer"))
			return
		}
		if err := db.SetPurgedInfosLimit(r.Context(), n); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, okTrue)
	default:
		s.writeError(w, r, methodNotAllowed("GET,PUT"))
	}
}

// purgedInfoLess orders purge records as Erlang orders CouchDB's
// {Id, [{Pos, RevId}]} terms: ids as bytes, then revisions element by
// element (position as a number), a shorter list first.
func purgedInfoLess(a, b localdb.PurgedInfo) bool {
	if a.ID != b.ID {
		return a.ID < b.ID
	}
	for k := 0; k < len(a.Revs) && k < len(b.Revs); k++ {
		if c := compareRevTerm(a.Revs[k], b.Revs[k]); c != 0 {
			return c < 0
		}
	}
	return len(a.Revs) < len(b.Revs)
}

// compareRevTerm compares two "N-hash" revisions as {N, Hash} tuples.
func compareRevTerm(a, b string) int {
	pa, ha := splitRevTerm(a)
	pb, hb := splitRevTerm(b)
	if pa != pb {
		if pa < pb {
			return -1
		}
		return 1
	}
	return strings.Compare(ha, hb)
}

func splitRevTerm(r string) (int64, string) {
	i := strings.IndexByte(r, '-')
	if i < 0 {
		return 0, r
	}
	n, _ := strconv.ParseInt(r[:i], 10, 64)
	return n, r[i+1:]
}
