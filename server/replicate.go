package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/failure"
	"github.com/settee/settee/server/scheduler"
	"github.com/settee/settee/sync"
)

// serveReplicate is POST /_replicate: a one-shot replication answered
// when it ends (200 with its history), a continuous one started (202),
// or one cancelled ("cancel": true), as CouchDB 3.5. Its endpoints are
// URLs, as in _replicator documents. Any user who logged in may start one
// (with the endpoints' own credentials); a replication another user
// started is only joined or cancelled by a server admin, as CouchDB's
// check_authorization.
func (s *Server) serveReplicate(w http.ResponseWriter, r *http.Request, c *call) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodHead:
		s.writeError(w, r, badRequest("Missing request body"))
		return
	default:
		s.writeError(w, r, methodNotAllowed("POST"))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil || req == nil {
		s.writeError(w, r, badRequest("Request body must be a JSON object"))
		return
	}
	var cancel bool
	_ = json.Unmarshal(req["cancel"], &cancel)
	if id, ok := req["replication_id"]; ok && cancel {
		var rid string
		_ = json.Unmarshal(id, &rid)
		s.cancelReplication(w, r, c, rid)
		return
	}
	sp, err := scheduler.ParseSpec(body)
	if err != nil {
		var ce *couchdoc.Error
		if errors.As(err, &ce) && ce.Status == http.StatusForbidden {
			err = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "error", Reason: ce.Reason}
		}
		s.writeError(w, r, err)
		return
	}
	if cancel {
		id, err := s.sched.ReplicationID(sp)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.cancelReplication(w, r, c, id)
		return
	}
	if id, err := s.sched.ReplicationID(sp); err == nil {
		if err := s.mayJoin(c, id); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	h, err := s.sched.Add(sp, c.auth.User.Name)
	var dup *scheduler.DuplicateError
	if errors.As(err, &dup) {
		err = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "error", Reason: dup.Error()}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if sp.Continuous {
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "_local_id": h.ID()})
		return
	}
	results, err := h.Wait(r.Context())
	if errors.Is(err, r.Context().Err()) && r.Context().Err() != nil {
		s.sched.Cancel(h.ID()) // the client is gone
		return
	}
	if err != nil {
		s.writeError(w, r, replicateError(err))
		return
	}
	writeJSON(w, http.StatusOK, replicateAnswer(results))
}

// mayJoin refuses a user who is not a server admin a _replicate job
// another user started.
func (s *Server) mayJoin(c *call, id string) error {
	if user, ok := s.sched.ReplicateUser(id); ok && user != c.auth.User.Name && !c.auth.User.IsServerAdmin() {
		return couchdoc.Errorf(couchdoc.ErrUnauthorized, reasonNotServerAdmin)
	}
	return nil
}

func (s *Server) cancelReplication(w http.ResponseWriter, r *http.Request, c *call, id string) {
	if err := s.mayJoin(c, id); err != nil {
		s.writeError(w, r, err)
		return
	}
	if !s.sched.Cancel(id) {
		s.writeError(w, r, couchdoc.ErrNotFound)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "_local_id": id})
}

// replicateError is the 500 CouchDB answers for a one-shot that failed.
func replicateError(err error) error {
	name := "error"
	switch {
	case errors.Is(err, scheduler.ErrCancelled):
		return couchdoc.Errorf(couchdoc.ErrNotFound, "replication cancelled")
	case errors.Is(err, couchdoc.ErrNotFound):
		name = "db_not_found"
	case failure.Auth(err):
		name = "replication_auth_error"
	}
	return &couchdoc.Error{Status: http.StatusInternalServerError, Name: name, Reason: err.Error()}
}

// replicateAnswer is a one-shot's answer: its sessions' history.
func replicateAnswer(results []*sync.Result) map[string]any {
	out := map[string]any{"ok": true, "replication_id_version": sync.ReplicationIDVersion}
	history := []map[string]any{}
	for _, res := range results {
		if res == nil {
			continue
		}
		out["session_id"], out["source_last_seq"] = res.SessionID, rawOr(res.LastSeq, 0)
		history = append(history, map[string]any{"session_id": res.SessionID,
			"start_time": res.StartTime.UTC().Format(http.TimeFormat), "end_time": res.EndTime.UTC().Format(http.TimeFormat),
			"start_last_seq": rawOr(res.StartSeq, 0), "end_last_seq": rawOr(res.LastSeq, 0), "recorded_seq": rawOr(res.LastSeq, 0),
			"missing_checked": res.Stats.MissingChecked, "missing_found": res.Stats.MissingFound,
			"docs_read": res.Stats.DocsRead, "docs_written": res.Stats.DocsWritten, "doc_write_failures": res.Stats.DocWriteFailures,
			"bulk_get_docs": res.Stats.DocsRead, "bulk_get_attempts": res.Stats.DocsRead})
	}
	out["history"] = history
	return out
}

func rawOr(r json.RawMessage, def any) any {
	if len(r) == 0 {
		return def
	}
	return r
}
