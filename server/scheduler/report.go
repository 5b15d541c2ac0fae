package scheduler

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/settee/settee/sync"
)

// States are the states of _scheduler/docs, as CouchDB 3.5 names them.
var States = []string{"initializing", "error", "running", "pending", "crashing", "completed", "failed"}

// stats is a job's info in CouchDB's shape.
type stats struct {
	RevisionsChecked      int64           `json:"revisions_checked"`
	MissingRevisionsFound int64           `json:"missing_revisions_found"`
	DocsRead              int64           `json:"docs_read"`
	DocsWritten           int64           `json:"docs_written"`
	ChangesPending        *int64          `json:"changes_pending"`
	DocWriteFailures      int64           `json:"doc_write_failures"`
	BulkGetDocs           int64           `json:"bulk_get_docs"`
	BulkGetAttempts       int64           `json:"bulk_get_attempts"`
	CheckpointedSourceSeq json.RawMessage `json:"checkpointed_source_seq"`
	SourceSeq             json.RawMessage `json:"source_seq,omitempty"`
	ThroughSeq            json.RawMessage `json:"through_seq,omitempty"`
}

func statsOf(st sync.Status, seqs bool) stats {
	out := stats{RevisionsChecked: st.Stats.MissingChecked, MissingRevisionsFound: st.Stats.MissingFound,
		DocsRead: st.Stats.DocsRead, DocsWritten: st.Stats.DocsWritten, DocWriteFailures: st.Stats.DocWriteFailures,
		BulkGetDocs: st.Stats.DocsRead, BulkGetAttempts: st.Stats.DocsRead, CheckpointedSourceSeq: st.CheckpointedSeq}
	if st.Pending >= 0 && seqs {
		p := st.Pending
		out.ChangesPending = &p
	}
	if len(out.CheckpointedSourceSeq) == 0 {
		out.CheckpointedSourceSeq = json.RawMessage(`0`)
	}
	if seqs && len(st.LastSeq) > 0 {
		out.SourceSeq, out.ThroughSeq = st.LastSeq, st.LastSeq
	}
	return out
}

// view is what a report needs of a job, read under the lock.
type view struct {
	j        *job
	state    string
	info     any
	st       sync.Status
	running  bool
	errCount int
}

// viewLocked reads a job's state: pending (no slot), crashing (its last
// run failed, or it retries a peer it lost), running, or initializing.
func (s *Scheduler) viewLocked(j *job) view {
	v := view{j: j, errCount: j.errCount}
	switch {
	case j.sup != nil:
		v.st = j.sup.Status()
		v.running = true
		if v.st.State == sync.StateOffline {
			v.state = "crashing"
			v.info = map[string]string{"error": errText(v.st.LastError)}
			v.errCount = max(v.errCount, 1)
		} else {
			v.state = "running"
			if v.st.Stats != (sync.Stats{}) || len(v.st.CheckpointedSeq) > 0 {
				v.info = statsOf(v.st, true)
			}
		}
	case j.pending:
		v.state = "pending"
	case j.lastErr != nil:
		v.state = "crashing"
		v.info = map[string]string{"error": errText(j.lastErr)}
	default:
		v.state = "initializing"
	}
	return v
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}

// Jobs is _scheduler/jobs's list, sorted by id.
func (s *Scheduler) Jobs() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		out = append(out, s.jobLocked(s.jobs[id]))
	}
	return out
}

// Job is _scheduler/jobs/ID; false when no job has that id.
func (s *Scheduler) Job(id string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return nil, false
	}
	return s.jobLocked(j), true
}

func (s *Scheduler) jobLocked(j *job) map[string]any {
	v := s.viewLocked(j)
	var info any
	if v.state == "running" {
		info = v.info
	}
	var pid any
	if v.running {
		pid = j.pid
	}
	db := any(s.cfg.Database)
	if j.docID == "" {
		db = nil
	}
	return map[string]any{"database": db, "id": j.id, "pid": pid, "source": j.spec.Source.Display(),
		"target": j.spec.Target.Display(), "user": nullable(j.user), "doc_id": nullable(j.docID), "info": info,
		"history": append([]historyEntry{}, j.history...), "node": s.cfg.Node, "start_time": timeOrNil(j.started)}
}

// Docs is _scheduler/docs's list, sorted by document id, restricted to
// the states given (all when none).
func (s *Scheduler) Docs(states []string) []map[string]any {
	want := map[string]bool{}
	for _, st := range states {
		want[st] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.docs))
	for id := range s.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := []map[string]any{}
	for _, id := range ids {
		d := s.docLocked(s.docs[id])
		if len(want) == 0 || want[d["state"].(string)] {
			out = append(out, d)
		}
	}
	return out
}

// Doc is _scheduler/docs/{db}/ID; false when the document is unknown.
func (s *Scheduler) Doc(id string) (map[string]any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.docs[id]
	if e == nil {
		return nil, false
	}
	return s.docLocked(e), true
}

func (s *Scheduler) docLocked(e *docEntry) map[string]any {
	out := map[string]any{"database": s.cfg.Database, "doc_id": e.id}
	if e.spec != nil {
		out["source"], out["target"] = e.spec.Source.Display(), e.spec.Target.Display()
	}
	if j := s.jobs[e.repID]; e.repID != "" && j != nil {
		v := s.viewLocked(j)
		out["id"], out["node"], out["state"], out["info"] = j.id, s.cfg.Node, v.state, v.info
		out["error_count"], out["last_updated"], out["start_time"] = v.errCount, timeOrNil(j.updated), timeOrNil(j.added)
		out["source_proxy"], out["target_proxy"] = nil, nil
		return out
	}
	if e.filterRepID != "" {
		// Waiting for its filter, the document is the doc processor's,
		// which shows neither endpoint.
		delete(out, "source")
		delete(out, "target")
		out["node"] = s.cfg.Node
		out["id"], out["state"], out["error_count"], out["info"] = nil, e.state, e.errCount, nil
		if e.state == "error" {
			out["info"] = map[string]string{"error": e.errMsg}
		}
		out["start_time"], out["last_updated"] = timeOrNil(e.started), timeOrNil(e.updated)
		return out
	}
	out["id"], out["state"], out["error_count"] = nil, e.state, e.errCount
	switch e.state {
	case "completed":
		out["info"] = e.info
	default:
		out["info"] = map[string]string{"error": e.errMsg}
	}
	out["start_time"], out["last_updated"] = timeOrNil(e.started), timeOrNil(e.updated)
	return out
}

// ActiveTasks are the running jobs as _active_tasks rows.
func (s *Scheduler) ActiveTasks() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.jobs))
	for id, j := range s.jobs {
		if j.sup != nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := []map[string]any{}
	for _, id := range ids {
		j := s.jobs[id]
		v := s.viewLocked(j)
		if v.state != "running" {
			continue
		}
		st := statsOf(v.st, true)
		interval := j.spec.CheckpointInterval
		if interval == 0 {
			interval = sync.DefaultContinuousCheckpointInterval.Milliseconds()
		}
		db := any(s.cfg.Database)
		if j.docID == "" {
			db = nil
		}
		out = append(out, map[string]any{"node": s.cfg.Node, "pid": j.pid, "process_status": "waiting",
			"bulk_get_attempts": st.BulkGetAttempts, "bulk_get_docs": st.BulkGetDocs, "changes_pending": st.ChangesPending,
			"checkpoint_interval": interval, "checkpointed_source_seq": st.CheckpointedSourceSeq, "continuous": j.spec.Continuous,
			"database": db, "doc_id": nullable(j.docID), "doc_write_failures": st.DocWriteFailures, "docs_read": st.DocsRead,
			"docs_written": st.DocsWritten, "missing_revisions_found": st.MissingRevisionsFound, "replication_id": j.id,
			"revisions_checked": st.RevisionsChecked, "source": j.spec.Source.Display(), "source_seq": rawOrNil(st.SourceSeq),
			"started_on": j.started.Unix(), "target": j.spec.Target.Display(), "through_seq": rawOrNil(st.ThroughSeq),
			"type": "replication", "updated_on": time.Now().Unix(), "user": nullable(j.user)})
	}
	return out
}

func rawOrNil(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	return r
}
