package sync

import (
	"context"
	"encoding/json"
	"time"
)

// Options configure one replication (one direction). Zero values pick the
// defaults noted on each field.
type Options struct {
	// Source and Target are the two databases. Both are required for
	// Replicate; Sync sets them itself.
	Source, Target Peer

	// Continuous keeps the replication running, following the source's
	// changes, until its context is cancelled or Stop is called.
	Continuous bool
	// CreateTarget creates a missing target when it implements Creator
	// (for Sync and NewSync: the remote, whichever direction finds it
	// missing first). It is not part of the replication id: a replication
	// with it and one without share their checkpoints.
	CreateTarget bool

	// DocIDs, Selector and Filter (with QueryParams) restrict the source's
	// changes feed. They are part of the replication id.
	DocIDs      []string
	Selector    json.RawMessage
	Filter      string
	QueryParams map[string]string

	// Attachments picks the attachment bodies a pull brings: Eager (the
	// zero value), Lazy or LazyOver(n). Lazy needs a source that is a
	// StubReader (and, with LazyOver, an AttachmentGetter) and a target
	// that is a LazyWriter; Sync pulls so and always pushes eagerly. It is
	// not part of the replication id.
	Attachments Attachments

	// FetchMissing, when set, is called by a push for each attachment
	// whose body the source lacks (lazy attachments) and the target has
	// not, to bring it into the source first (localpeer.FetchFrom: from
	// the database it was pulled from); the document is then read again
	// and sent with its bodies. Without it, or when it fails, that
	// document fails alone with couchdoc.ErrAttachmentNotDownloaded.
	FetchMissing func(ctx context.Context, id, name string) error

	// Since starts the changes feed after this opaque sequence instead of
	// the recorded checkpoint.
	Since json.RawMessage

	// BatchSize is the number of changes rows read per request and handled
	// as one unit by revs_diff and fetch. Default 500.
	BatchSize int
	// BulkDocsSize and BulkDocsBytes bound one _bulk_docs request. Defaults
	// 500 documents and 4 MiB of JSON.
	BulkDocsSize  int
	BulkDocsBytes int
	// BulkGetSize bounds the revisions asked for in one _bulk_get request.
	// Default 250.
	BulkGetSize int
	// Workers is the number of batches fetched in parallel. Default 4.
	Workers int

	// Retries is how many times a failed step (read a batch of changes,
	// revs_diff, fetch, write, checkpoint) is retried after a transient
	// error: at most Retries+1 attempts. The replicator is the one layer
	// that retries; give it peers that send each request once (couch.DB's
	// default). 0 means the default, 5; a negative value means no retry.
	Retries int
	// RetryDelay is the first backoff delay, doubled at each attempt with
	// jitter up to MaxRetryDelay. Defaults 250 ms and 30 s. A continuous
	// replication that went offline retries with the same backoff.
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration

	// CheckpointInterval is the least time between two checkpoints written
	// while the replication runs; a final one is always written when it
	// stops. 0 picks the default: after every batch that advances the safe
	// sequence for a one-shot replication, every
	// DefaultContinuousCheckpointInterval for a continuous one. A negative
	// value checkpoints after every such batch in both. A checkpoint only
	// saves work on a restart (which resumes from the last one and reads
	// the changes after it again); written documents are durable without
	// it.
	CheckpointInterval time.Duration
	// Heartbeat keeps a continuous feed's connection alive. Default 10 s.
	Heartbeat time.Duration

	// Throttle, when positive, bounds the documents written to the target
	// a second: a low-power mode for a sync an app runs in the
	// background, whose reads and fetches follow the writes. Writes then
	// go in units of at most a tenth of it (BulkDocsSize permitting), so
	// that no write holds the target's writer long.
	Throttle int

	// OnEvent, when set, receives every event, one at a time, from the
	// replication's goroutines: it must not block for long. Under a
	// Supervisor it is called from the supervisor's own goroutine instead,
	// with progress coalesced, and may block and call the supervisor.
	OnEvent func(Event)
	// DocumentEvents adds EventDocs to OnEvent's events: which documents
	// each write moved (an app's "synced" badge). Off, no list is built.
	DocumentEvents bool
	// docsWanted, set by a Supervisor, turns EventDocs on while it
	// returns true (a listener wants them).
	docsWanted func() bool

	// noEmptyTargetShortcut turns off the optimisation that skips
	// revs_diff while replicating the initial feed into a target that was
	// empty and had no checkpoint (everything is missing there). Tests set
	// it to reach the fetch path with a fresh target.
	noEmptyTargetShortcut bool
	// createSource creates a missing source as CreateTarget creates a
	// target: the pull of a sync with CreateTarget, whose source is the
	// remote its push creates.
	createSource bool
}

// Defaults.
const (
	DefaultBatchSize     = 500
	DefaultBulkDocsSize  = 500
	DefaultBulkDocsBytes = 4 << 20
	DefaultBulkGetSize   = 250
	DefaultWorkers       = 4
	DefaultRetries       = 5
	DefaultRetryDelay    = 250 * time.Millisecond
	DefaultMaxRetryDelay = 30 * time.Second
	DefaultHeartbeat     = 10 * time.Second
	// DefaultContinuousCheckpointInterval spaces the checkpoints of a
	// continuous replication, which otherwise writes two _local documents
	// per small batch, a cost per cycle that dominated a busy hub's latency
	// (CouchDB's replicator checkpoints every 30 s by default).
	DefaultContinuousCheckpointInterval = 5 * time.Second
)

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.BatchSize, DefaultBatchSize)
	def(&o.BulkDocsSize, DefaultBulkDocsSize)
	def(&o.BulkDocsBytes, DefaultBulkDocsBytes)
	def(&o.BulkGetSize, DefaultBulkGetSize)
	def(&o.Workers, DefaultWorkers)
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.MaxRetryDelay <= 0 {
		o.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.CheckpointInterval == 0 && o.Continuous {
		o.CheckpointInterval = DefaultContinuousCheckpointInterval
	}
	o.CheckpointInterval = max(o.CheckpointInterval, 0)
	if o.Throttle > 0 {
		o.BulkDocsSize = max(1, min(o.BulkDocsSize, o.Throttle/10))
	}
	return o
}

// Stats are the counters of a replication, as in CouchDB's replication log.
type Stats struct {
	// DocsRead counts revisions fetched from the source.
	DocsRead int64 `json:"docs_read"`
	// DocsWritten counts revisions the target accepted.
	DocsWritten int64 `json:"docs_written"`
	// MissingChecked counts revisions asked about with revs_diff.
	MissingChecked int64 `json:"missing_checked"`
	// MissingFound counts revisions the target lacked.
	MissingFound int64 `json:"missing_found"`
	// DocWriteFailures counts revisions the target refused (forbidden,
	// unauthorized, invalid); they are not retried.
	DocWriteFailures int64 `json:"doc_write_failures"`
	// DocsCompleted counts documents handled: written, refused,
	// unreadable or found already on the target. A document leaves
	// Status.Pending in the step that counts it here, so DocsCompleted +
	// Pending is the work known so far.
	DocsCompleted int64 `json:"docs_completed"`
}

// Add adds o's counters to s: the totals of several sessions or
// directions.
func (s *Stats) Add(o Stats) {
	s.DocsRead += o.DocsRead
	s.DocsWritten += o.DocsWritten
	s.MissingChecked += o.MissingChecked
	s.MissingFound += o.MissingFound
	s.DocWriteFailures += o.DocWriteFailures
	s.DocsCompleted += o.DocsCompleted
}

// Result is the outcome of a one-shot replication, or of a continuous one
// when it stopped.
type Result struct {
	ReplicationID string
	// SessionID is the id of the last session (a continuous replication
	// starts a new session each time it comes back online).
	SessionID string
	Stats     Stats
	// StartSeq is where the feed started (nil: from the beginning); LastSeq
	// is the last checkpointed sequence.
	StartSeq json.RawMessage
	LastSeq  json.RawMessage
	// DocFailures lists the documents the target refused (at most 100 kept).
	DocFailures []DocFailure
	// Retries counts the attempts of steps repeated after a transient
	// error (Options.Retries bounds them per step).
	Retries   int64
	StartTime time.Time
	EndTime   time.Time
}

// DocFailure is one revision the target refused, or one the source could
// not provide.
type DocFailure struct {
	ID  string
	Rev string
	Err error
}
