package sync

import (
	"context"
	"encoding/json"
	"time"

	"github.com/settee/settee/couchdoc"
)

// Peer is what the replication protocol needs of a source and of a target.
// Implementations return *couchdoc.Error values (matched with errors.Is
// against the couchdoc sentinels) for CouchDB errors, and wrap transport
// errors. Every method must honour ctx.
type Peer interface {
	// String names the peer in errors, logs and events. It never includes
	// credentials.
	String() string

	// Info returns the database's info (GET /{db}). A missing database is
	// couchdoc.ErrNotFound; bad credentials couchdoc.ErrUnauthorized or
	// couchdoc.ErrForbidden.
	Info(ctx context.Context) (*PeerInfo, error)

	// GetLocal returns a _local document (id without the "_local/" prefix)
	// as JSON including _id and _rev, or couchdoc.ErrNotFound.
	GetLocal(ctx context.Context, id string) (json.RawMessage, error)

	// PutLocal writes a _local document (id without the prefix). body carries
	// the _rev of the version it replaces, if any. It returns the new rev.
	PutLocal(ctx context.Context, id string, body json.RawMessage) (rev string, err error)

	// Changes reads the changes feed with style=all_docs, calling fn for each
	// row in feed order, and returns the feed's last_seq. With Feed
	// "continuous" or "longpoll" it follows opts; a continuous feed runs until
	// ctx is done or fn returns an error. An error from fn stops the feed and
	// is returned as is.
	Changes(ctx context.Context, opts ChangesOptions, fn func(*couchdoc.Change) error) (lastSeq json.RawMessage, err error)

	// RevsDiff returns, per document id, the revisions the peer lacks and
	// their possible ancestors. Ids with nothing missing are absent.
	RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error)

	// OpenRevs fetches the listed revisions of one document with their
	// histories (revs=true, latest=true), attachment bodies for attachments
	// newer than attsSince and stubs for the others. fn is called once per
	// revision: with the document, or with a nil document and a per-revision
	// error (couchdoc.ErrNotFound for a missing revision) that the caller
	// counts and goes on. Attachment bodies (Attachment.Body) are only valid
	// inside fn.
	OpenRevs(ctx context.Context, id string, revs []string, attsSince []string, fn func(doc *couchdoc.Doc, revErr error) error) error

	// BulkDocs writes documents with new_edits=false, in one request.
	// Attachments are inline (Data) or stubs, never streamed. It returns the
	// per-document failures (forbidden, unauthorized, ...), and may return
	// successes marked Existing (revisions it had already, which are not
	// counted as written); a request that failed as a whole is an error.
	BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error)

	// PutDoc writes one document with new_edits=false, streaming the bodies
	// of its attachments (Attachment.Body) rather than holding them in memory.
	PutDoc(ctx context.Context, doc *couchdoc.Doc) error

	// EnsureFullCommit asks the peer to make its writes durable.
	EnsureFullCommit(ctx context.Context) error
}

// BulkGetter is the optional _bulk_get capability. Without it the
// replicator falls back to Peer.OpenRevs, one document at a time.
type BulkGetter interface {
	// BulkGet fetches many revisions in one request, with the same contract
	// as Peer.OpenRevs for fn. When the peer turns out not to support
	// _bulk_get it returns an error matching ErrNoBulkGet before calling
	// fn, and the replicator uses OpenRevs for the rest of the session.
	// Any other error (a garbled or cut answer) is an error of this call
	// only.
	BulkGet(ctx context.Context, reqs []BulkGetRequest, fn func(doc *couchdoc.Doc, revErr error) error) error
}

// InlineWriter is the optional capability of a target that takes inline
// attachment bytes in BulkDocs (the local store: as cheaply as streamed
// ones; a remote: small ones, see couch.InlineMax). The replicator then
// reads a document's streamed attachment bodies into memory when they
// total at most InlineAttachmentMax bytes and writes the document in a
// batch, instead of alone with PutDoc (a transaction, or a request, each).
type InlineWriter interface {
	InlineAttachmentMax() int64
}

// Creator is the optional capability of creating a missing database
// (create_target).
type Creator interface {
	// Create creates the database; couchdoc.ErrFileExists if it exists.
	Create(ctx context.Context) error
}

// Identifier is the optional capability of a peer with a persistent unique
// id, such as the local store's UUID; the replication id is derived from it.
type Identifier interface {
	// UUID returns the peer's persistent unique id.
	UUID() string
}

// Seeded is the optional capability of an Identifier peer that was cloned
// from other stores (a prebuilt seed): a replication with no checkpoint of
// its own starts from the newest checkpoint the seed (or the seed's seed)
// left with the same other peer, then records its own under its own id.
type Seeded interface {
	// SeedUUIDs returns the UUIDs of the stores the peer was cloned from,
	// the nearest first.
	SeedUUIDs() []string
}

// Reauthorizer is the optional capability of a remote peer whose
// credentials can change while it is in use (a token provider). A
// Supervisor refused with 401 or 403 waits in StateUnauthorized until
// WaitCredentials returns nil, then starts a new session from its
// checkpoint; without the capability, or when it returns
// ErrFixedCredentials, the supervisor stops in StateUnauthorized.
type Reauthorizer interface {
	// WaitCredentials blocks until the credentials the peer would send
	// differ from those of its last refused request (401 or 403) and
	// returns nil. It returns ErrFixedCredentials at once when they
	// cannot change, and ctx's error when ctx is done. It makes no
	// request to the server.
	WaitCredentials(ctx context.Context) error
}

// PeerInfo is what the replicator uses of a database's info.
type PeerInfo struct {
	DBName            string          `json:"db_name"`
	DocCount          int64           `json:"doc_count"`
	DocDelCount       int64           `json:"doc_del_count"`
	UpdateSeq         json.RawMessage `json:"update_seq"`
	InstanceStartTime string          `json:"instance_start_time,omitempty"`
}

// BulkGetRequest names one revision to fetch with _bulk_get.
type BulkGetRequest struct {
	ID        string   `json:"id"`
	Rev       string   `json:"rev"`
	AttsSince []string `json:"atts_since,omitempty"`
}

// ChangesOptions are the parameters of a changes feed request. The feed is
// always style=all_docs.
type ChangesOptions struct {
	// Since is the opaque sequence to start after; nil means from the start.
	Since json.RawMessage
	// Limit bounds the rows of a normal or longpoll feed; 0 means no limit.
	Limit int
	// Feed is "normal" (default), "longpoll" or "continuous".
	Feed string
	// Heartbeat keeps a continuous or longpoll connection alive.
	Heartbeat time.Duration
	// Timeout ends a longpoll or continuous feed that saw no change.
	Timeout time.Duration
	// DocIDs restricts the feed (filter=_doc_ids).
	DocIDs []string
	// Selector is a Mango selector (filter=_selector).
	Selector json.RawMessage
	// Filter names a design document filter ("ddoc/name") with QueryParams.
	Filter      string
	QueryParams map[string]string
	// IncludeDocs asks for each row's winning revision in Change.Doc
	// (include_docs=true, no attachment bodies). A peer may ignore it.
	IncludeDocs bool
	// OnPending, when set, is called once a normal or longpoll feed ended
	// with how many changes the peer holds after its last_seq (CouchDB's
	// "pending"): exact for an unfiltered or doc_ids feed; for a feed
	// filtered by a selector or a design filter CouchDB counts every
	// change, matching or not (an upper bound). A peer that cannot tell
	// does not call it.
	OnPending func(n int64)
}
