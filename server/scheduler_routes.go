package server

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// serveActiveTasks is GET /_active_tasks: the running replications, in
// CouchDB's shape.
func (s *Server) serveActiveTasks(w http.ResponseWriter, r *http.Request, _ *call) {
	if !isGet(r) {
		s.writeError(w, r, methodNotAllowed("GET,HEAD"))
		return
	}
	tasks := []map[string]any{}
	if s.sched != nil {
		tasks = s.sched.ActiveTasks()
	}
	writeJSON(w, http.StatusOK, tasks)
}

// serveScheduler is GET /_scheduler/jobs[/ID] and
// /_scheduler/docs[/_replicator[/ID]], as CouchDB 3.5 answers them.
func (s *Server) serveScheduler(w http.ResponseWriter, r *http.Request, c *call) {
	if !isGet(r) {
		s.writeError(w, r, methodNotAllowed("GET,HEAD"))
		return
	}
	parts := strings.SplitN(c.rt.docID, "/", 2)
	rest := ""
	if len(parts) == 2 {
		rest = parts[1]
	}
	sched := s.sched
	switch {
	case parts[0] == "jobs" && rest == "":
		var jobs []map[string]any
		if sched != nil {
			jobs = sched.Jobs()
		}
		page, err := pageOf(r, jobs)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_rows": len(jobs), "offset": 0, "jobs": page})
	case parts[0] == "jobs":
		// A job id's '+' ("+continuous") arrives decoded as a space, as
		// in any path; ids have no spaces.
		if sched != nil {
			if job, ok := sched.Job(strings.ReplaceAll(rest, " ", "+")); ok {
				writeJSON(w, http.StatusOK, job)
				return
			}
		}
		s.writeError(w, r, couchdoc.ErrNotFound)
	case parts[0] == "docs" && (rest == "" || rest == ReplicatorDB):
		states, err := statesParam(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		docs := []map[string]any{}
		if sched != nil {
			docs = sched.Docs(states)
		}
		page, err := pageOf(r, docs)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"total_rows": len(docs), "offset": 0, "docs": page})
	case parts[0] == "docs" && strings.HasPrefix(rest, ReplicatorDB+"/"):
		if sched != nil {
			if doc, ok := sched.Doc(strings.TrimPrefix(rest, ReplicatorDB+"/")); ok {
				writeJSON(w, http.StatusOK, doc)
				return
			}
		}
		s.writeError(w, r, couchdoc.ErrNotFound)
	case parts[0] == "docs":
		s.writeError(w, r, badRequest("Invalid path"))
	default:
		s.writeError(w, r, couchdoc.Errorf(couchdoc.ErrNotFound, "unknown path"))
	}
}

// statesParam reads _scheduler/docs's states=a,b.
func statesParam(r *http.Request) ([]string, error) {
	v := r.URL.Query().Get("states")
	if v == "" {
		return nil, nil
	}
	states := strings.Split(v, ",")
	for _, st := range states {
		if !isSchedulerState(st) {
			return nil, &couchdoc.Error{Status: http.StatusBadRequest, Name: "query_parse_error",
				Reason: "States must be one or more of [initializing,error,running,pending,crashing,completed,failed]"}
		}
	}
	return states, nil
}

func isSchedulerState(st string) bool {
	switch st {
	case "initializing", "error", "running", "pending", "crashing", "completed", "failed":
		return true
	}
	return false
}

// pageOf applies limit and skip.
func pageOf(r *http.Request, rows []map[string]any) ([]map[string]any, error) {
	q := r.URL.Query()
	skip, limit := 0, len(rows)
	if v := q.Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, &couchdoc.Error{Status: http.StatusBadRequest, Name: "query_parse_error", Reason: "Invalid value for `skip`."}
		}
		skip = min(n, len(rows))
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, &couchdoc.Error{Status: http.StatusBadRequest, Name: "query_parse_error", Reason: "Invalid value for `limit`."}
		}
		limit = n
	}
	rows = rows[skip:]
	if limit < len(rows) {
		rows = rows[:limit]
	}
	if rows == nil {
		rows = []map[string]any{}
	}
	return rows, nil
}
