package sync

import (
	"encoding/json"
	"time"

	"github.com/settee/settee/internal/failure"
)

// State is where a replication is in its life.
type State string

// States of a replication.
const (
	// StateStarting: verifying peers and reading checkpoints.
	StateStarting State = "starting"
	// StateActive: changes are being transferred.
	StateActive State = "active"
	// StateIdle: a continuous replication caught up and waits for changes.
	StateIdle State = "idle"
	// StateOffline: a continuous replication lost a peer and retries by
	// itself with backoff.
	StateOffline State = "offline"
	// StateStopped: finished (one-shot) or stopped (cancelled, Stop).
	StateStopped State = "stopped"
	// StateError: failed with a permanent error (see LastError).
	StateError State = "error"
	// StateUnauthorized: a peer refused the credentials (401 or 403; see
	// LastError). A Supervisor whose remote can change its credentials
	// (Reauthorizer) waits in this state and resumes from its checkpoint
	// once they change; otherwise the replication ended here.
	StateUnauthorized State = "unauthorized"
)

// failState is the state a permanent error ends a replication in.
func failState(err error) State {
	if failure.Auth(err) {
		return StateUnauthorized
	}
	return StateError
}

// EventKind says what an Event reports.
type EventKind string

// Kinds of events.
const (
	// EventState: the state changed.
	EventState EventKind = "state"
	// EventProgress: counters or sequences moved (sent after each batch and
	// each checkpoint).
	EventProgress EventKind = "progress"
	// EventDocFailure: one revision was refused by the target or could not
	// be read from the source; Doc says which.
	EventDocFailure EventKind = "doc_failure"
	// EventDocs: documents the target accepted or refused, or the source
	// could not provide, in batches: Docs lists them. Sent only with
	// Options.DocumentEvents.
	EventDocs EventKind = "docs"
	// EventSharedIdentity: the checkpoints show that another store with
	// the same UUID replicates with the same peer (a file copied by hand);
	// Err is ErrSharedIdentity. The replication goes on, correctly.
	EventSharedIdentity EventKind = "shared_identity"
)

// Event reports a replication's progress: what happened (Kind, Err, Doc)
// and the status of the replication it concerns once it happened (the
// embedded Status: for a sync, that of one direction, named by
// Replication). It is delivered to Options.OnEvent. Events never carry
// credentials.
type Event struct {
	Kind EventKind
	Status
	// Err is the error of an offline/error state, or of a doc failure.
	Err error
	// Doc is set for EventDocFailure.
	Doc *DocFailure
	// Docs is set for EventDocs.
	Docs []DocEvent
	// Time is when the event was sent.
	Time time.Time
}

// DocEvent is one document of an EventDocs: a revision written to the
// target, or (Err set) refused by it or unreadable on the source.
type DocEvent struct {
	ID, Rev string
	Deleted bool
	Err     error
}

// Status is a snapshot of a replication, for UIs and CLIs.
type Status struct {
	// Replication is "push", "pull", "sync" (both) or "" (Replicate and
	// New name no direction).
	Replication   string
	ReplicationID string
	State         State
	Stats         Stats
	// LastSeq is the last sequence read from the source's feed;
	// CheckpointedSeq the last one recorded in the replication logs.
	LastSeq         json.RawMessage
	CheckpointedSeq json.RawMessage
	// Pending counts the changes still to handle: the source's changes
	// after the last row read plus the documents read that the target has
	// not acknowledged yet; -1 when unknown. For a sync, the sum of both
	// directions (-1 when either is unknown).
	Pending int64
	// LastError is the latest error seen (it may have been recovered from
	// when State is not StateError).
	LastError error
	// Updated is when the state last changed.
	Updated time.Time
	// Directions holds the push and pull statuses of a Sync.
	Directions []Status
	// Completed and Total are a Supervisor's progress since it was made
	// (set by Supervisor.Status only): the documents handled, both
	// directions (Stats.DocsCompleted), and those known to be handled
	// (Completed plus Pending, when the source counts its changes). Both
	// only grow, Completed <= Total, and Total grows as new changes
	// arrive; when Pending drops without documents being handled (the
	// source counted a change twice), Completed takes up the difference,
	// so that Completed == Total once caught up.
	Completed, Total int64
}

// eventJSON is the JSON shape of Event and Status, for the CLI and the
// mobile layer: errors as strings, sequences as they came.
type eventJSON struct {
	Kind            EventKind       `json:"kind,omitempty"`
	Replication     string          `json:"replication,omitempty"`
	ReplicationID   string          `json:"replication_id,omitempty"`
	State           State           `json:"state"`
	Stats           Stats           `json:"stats"`
	LastSeq         json.RawMessage `json:"last_seq,omitempty"`
	CheckpointedSeq json.RawMessage `json:"checkpointed_seq,omitempty"`
	Pending         int64           `json:"pending"`
	Error           string          `json:"error,omitempty"`
	DocID           string          `json:"doc_id,omitempty"`
	DocRev          string          `json:"doc_rev,omitempty"`
	Time            time.Time       `json:"time"`
	Directions      []Status        `json:"directions,omitempty"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// MarshalJSON encodes the event with its error as a string.
func (e Event) MarshalJSON() ([]byte, error) {
	j := eventJSON{Kind: e.Kind, Replication: e.Replication, ReplicationID: e.ReplicationID, State: e.State,
		Stats: e.Stats, LastSeq: e.LastSeq, CheckpointedSeq: e.CheckpointedSeq, Pending: e.Pending,
		Error: errString(e.Err), Time: e.Time}
	if e.Doc != nil {
		j.DocID, j.DocRev = e.Doc.ID, e.Doc.Rev
	}
	return json.Marshal(j)
}

// MarshalJSON encodes the status with its error as a string.
func (s Status) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{Replication: s.Replication, ReplicationID: s.ReplicationID, State: s.State,
		Stats: s.Stats, LastSeq: s.LastSeq, CheckpointedSeq: s.CheckpointedSeq, Pending: s.Pending,
		Error: errString(s.LastError), Time: s.Updated, Directions: s.Directions})
}
