package server

import (
	"context"
	"net/http"

	"github.com/settee/settee/localdb"
)

// serveMissingRevs is POST /{db}/_missing_revs, the older form of
// _revs_diff: the revisions of each document the database lacks.
func (s *Server) serveMissingRevs(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	res, ok := s.revsDiff(w, r, db)
	if !ok {
		return
	}
	missing := map[string][]string{}
	for id, d := range res {
		if len(d.Missing) > 0 {
			missing[id] = d.Missing
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"missing_revs": missing})
}

// serveDBsInfo is /_dbs_info: GET lists every database's info, POST
// {"keys": [...]} the named ones ({"key", "error": "not_found"} for a
// missing one).
func (s *Server) serveDBsInfo(w http.ResponseWriter, r *http.Request, _ *call) {
	var names []string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		all, err := s.dbs.names()
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		names = all
	case http.MethodPost:
		var body struct {
			Keys []string `json:"keys"`
		}
		if err := decodeJSONBody(r, &body); err != nil {
			s.writeError(w, r, err)
			return
		}
		if body.Keys == nil {
			s.writeError(w, r, badRequest("`keys` member must exist."))
			return
		}
		names = body.Keys
	default:
		s.writeError(w, r, methodNotAllowed("GET,HEAD,POST"))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("ETag", opaqueETag(names...))
	}
	out := make([]map[string]any, 0, len(names))
	for _, name := range names {
		info, err := s.dbInfo(r.Context(), name)
		if err != nil {
			out = append(out, map[string]any{"key": name, "error": "not_found"})
			continue
		}
		out = append(out, map[string]any{"key": name, "info": info})
	}
	writeJSON(w, http.StatusOK, out)
}

// dbInfo is GET /{db}'s answer.
func (s *Server) dbInfo(ctx context.Context, name string) (map[string]any, error) {
	db, err := s.openDB(ctx, name)
	if err != nil {
		return nil, err
	}
	info, err := db.Info(ctx)
	if err != nil {
		return nil, err
	}
	sizes, err := db.Sizes(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"db_name":             name,
		"doc_count":           info.DocCount,
		"doc_del_count":       info.DocDelCount,
		"update_seq":          info.UpdateSeq,
		"purge_seq":           info.PurgeSeq,
		"compact_running":     false,
		"disk_format_version": 8,
		"instance_start_time": s.start,
		"sizes":               sizes,
		"props":               map[string]any{},
		// A single node holding a single shard of every database.
		"cluster": map[string]int{"q": 1, "n": 1, "w": 1, "r": 1},
	}, nil
}
