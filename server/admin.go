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

// dbInfo is GET /{db}'s answer, its members in CouchDB's order.
type dbInfo struct {
	InstanceStartTime string         `json:"instance_start_time"`
	DBName            string         `json:"db_name"`
	PurgeSeq          int64          `json:"purge_seq"`
	UpdateSeq         int64          `json:"update_seq"`
	Sizes             *localdb.Sizes `json:"sizes"`
	Props             struct{}       `json:"props"`
	DocDelCount       int64          `json:"doc_del_count"`
	DocCount          int64          `json:"doc_count"`
	DiskFormatVersion int            `json:"disk_format_version"`
	CompactRunning    bool           `json:"compact_running"`
	Cluster           dbInfoCluster  `json:"cluster"`
}

// dbInfoCluster is a single node holding a single shard of every
// database.
type dbInfoCluster struct {
	Q int `json:"q"`
	N int `json:"n"`
	W int `json:"w"`
	R int `json:"r"`
}

// dbInfo is GET /{db}'s answer.
func (s *Server) dbInfo(ctx context.Context, name string) (*dbInfo, error) {
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
	return &dbInfo{
		InstanceStartTime: s.start, DBName: name, PurgeSeq: info.PurgeSeq, UpdateSeq: info.UpdateSeq,
		Sizes: sizes, DocDelCount: info.DocDelCount, DocCount: info.DocCount, DiskFormatVersion: 8,
		Cluster: dbInfoCluster{Q: 1, N: 1, W: 1, R: 1},
	}, nil
}
