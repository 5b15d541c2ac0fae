package sync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/settee/settee/couchdoc"
)

// maxHistory is how many sessions a replication log keeps, as CouchDB.
const maxHistory = 50

// ReplicationLog is the checkpoint document kept as _local/<replication id>
// on both peers, in CouchDB's format.
type ReplicationLog struct {
	ID                   string          `json:"_id"`
	Rev                  string          `json:"_rev,omitempty"`
	SessionID            string          `json:"session_id"`
	SourceLastSeq        json.RawMessage `json:"source_last_seq"`
	ReplicationIDVersion int             `json:"replication_id_version"`
	History              []HistoryEntry  `json:"history"`
}

// HistoryEntry is one session of a replication log, newest first.
type HistoryEntry struct {
	SessionID        string          `json:"session_id"`
	StartTime        string          `json:"start_time"`
	EndTime          string          `json:"end_time"`
	StartLastSeq     json.RawMessage `json:"start_last_seq"`
	EndLastSeq       json.RawMessage `json:"end_last_seq"`
	RecordedSeq      json.RawMessage `json:"recorded_seq"`
	MissingChecked   int64           `json:"missing_checked"`
	MissingFound     int64           `json:"missing_found"`
	DocsRead         int64           `json:"docs_read"`
	DocsWritten      int64           `json:"docs_written"`
	DocWriteFailures int64           `json:"doc_write_failures"`
}

// readLog reads the replication log of one peer; a missing or unreadable
// log is nil (the replication then starts from scratch), other errors are
// returned.
func readLog(ctx context.Context, p Peer, repID string) (*ReplicationLog, error) {
	raw, err := p.GetLocal(ctx, repID)
	if errors.Is(err, couchdoc.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var l ReplicationLog
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, nil // corrupt log: ignore it, full replication
	}
	return &l, nil
}

// compareLogs finds where to resume, as the protocol says: the same last
// session on both sides resumes from source_last_seq; else the latest
// session both histories hold resumes from its recorded_seq; else nothing in
// common means a full replication (nil seq). It returns the history to keep.
func compareLogs(src, tgt *ReplicationLog) (json.RawMessage, []HistoryEntry) {
	if src == nil || tgt == nil {
		return nil, nil
	}
	if src.SessionID != "" && src.SessionID == tgt.SessionID {
		return nonNull(src.SourceLastSeq), src.History
	}
	inHist := func(h []HistoryEntry, id string) bool {
		for _, e := range h {
			if e.SessionID == id {
				return true
			}
		}
		return false
	}
	n := max(len(src.History), len(tgt.History))
	for i := 0; i < n; i++ {
		if i < len(src.History) && inHist(tgt.History, src.History[i].SessionID) {
			return nonNull(src.History[i].RecordedSeq), src.History[i:]
		}
		if i < len(tgt.History) && inHist(src.History, tgt.History[i].SessionID) {
			return nonNull(tgt.History[i].RecordedSeq), tgt.History[i:]
		}
	}
	return nil, nil
}

func nonNull(seq json.RawMessage) json.RawMessage {
	s := bytes.TrimSpace(seq)
	if len(s) == 0 || string(s) == "null" || string(s) == "0" || string(s) == `"0"` {
		return nil
	}
	return append(json.RawMessage(nil), s...)
}

// checkpointer records replication logs on both peers.
type checkpointer struct {
	r         *replication
	repID     string
	sessionID string
	startTime time.Time
	startSeq  json.RawMessage
	history   []HistoryEntry // older sessions, newest first
	srcRev    string
	tgtRev    string
	recorded  json.RawMessage // last recorded seq
	srcDenied bool            // the source refused checkpoint writes
}

// write records seq as this session's checkpoint on target and source. The
// caller made sure every change up to seq is durable on the target.
func (c *checkpointer) write(ctx context.Context, seq json.RawMessage, st Stats) error {
	now := time.Now().UTC()
	entry := HistoryEntry{
		SessionID:        c.sessionID,
		StartTime:        c.startTime.Format(time.RFC1123),
		EndTime:          now.Format(time.RFC1123),
		StartLastSeq:     orZero(c.startSeq),
		EndLastSeq:       seq,
		RecordedSeq:      seq,
		MissingChecked:   st.MissingChecked,
		MissingFound:     st.MissingFound,
		DocsRead:         st.DocsRead,
		DocsWritten:      st.DocsWritten,
		DocWriteFailures: st.DocWriteFailures,
	}
	hist := make([]HistoryEntry, 0, min(len(c.history)+1, maxHistory))
	hist = append(hist, entry)
	for _, h := range c.history {
		if len(hist) == maxHistory {
			break
		}
		hist = append(hist, h)
	}
	log := ReplicationLog{
		ID:                   "_local/" + c.repID,
		SessionID:            c.sessionID,
		SourceLastSeq:        seq,
		ReplicationIDVersion: ReplicationIDVersion,
		History:              hist,
	}
	var err error
	c.tgtRev, err = c.put(ctx, c.r.opts.Target, &log, c.tgtRev)
	if err != nil {
		return peerErr("target", c.r.opts.Target, "write checkpoint", err)
	}
	if !c.srcDenied {
		c.srcRev, err = c.put(ctx, c.r.opts.Source, &log, c.srcRev)
		if errors.Is(err, couchdoc.ErrUnauthorized) || errors.Is(err, couchdoc.ErrForbidden) {
			// A read-only source: keep the checkpoint on the target only.
			// The next run finds no common session and starts over, which
			// revs_diff makes cheap.
			c.srcDenied = true
			c.r.noteError(peerErr("source", c.r.opts.Source, "write checkpoint", err))
			err = nil
		}
		if err != nil {
			return peerErr("source", c.r.opts.Source, "write checkpoint", err)
		}
	}
	c.recorded = seq
	return nil
}

// put writes the log with rev; on a conflict (another run of the same
// replication, or a stale rev) it re-reads the current rev and tries again,
// a few times.
func (c *checkpointer) put(ctx context.Context, p Peer, log *ReplicationLog, rev string) (string, error) {
	for attempt := 0; ; attempt++ {
		log.Rev = rev
		body, err := json.Marshal(log)
		if err != nil {
			return "", err
		}
		newRev, err := p.PutLocal(ctx, c.repID, body)
		if err == nil {
			return newRev, nil
		}
		if attempt >= 3 || !errors.Is(err, couchdoc.ErrConflict) {
			return "", err
		}
		cur, rerr := readLog(ctx, p, c.repID)
		if rerr != nil {
			return "", rerr
		}
		rev = ""
		if cur != nil {
			rev = cur.Rev
		}
	}
}

func orZero(seq json.RawMessage) json.RawMessage {
	if len(seq) == 0 {
		return json.RawMessage("0")
	}
	return seq
}
