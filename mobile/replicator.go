package mobile

import (
	"context"
	"encoding/json"
	"time"

	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// ReplicatorConfig describes a replication between a Database and a remote
// CouchDB database. Create it with NewReplicatorConfig (or the generated
// no-argument constructor) and set the fields.
type ReplicatorConfig struct {
	// URL is the remote database, such as https://host:6984/mydb.
	URL string
	// Username and Password for basic authentication.
	Username, Password string
	// Session signs in once with Username and Password (POST /_session)
	// and sends the session cookie instead of the password; an expired
	// session is renewed, as CouchDB's replicator does.
	Session bool
	// Tokens, when set, is asked for a bearer token before requests and
	// again after a 401 (OAuth/JWT setups); it wins over Username.
	Tokens TokenProvider
	// Direction is "push", "pull" or "both" (the default).
	Direction string
	// Continuous keeps the replication running and following changes until
	// Stop; otherwise it stops once caught up.
	Continuous bool
	// CreateTarget creates the remote database when it is missing (push).
	CreateTarget bool
	// Filter names a design document filter "ddoc/name" of the remote (pull
	// only), with QueryParams as a JSON object of strings.
	Filter      string
	QueryParams string
	// DocIDs restricts the replication to these documents: a JSON array of
	// strings, or "".
	DocIDs string
	// Selector restricts the replication with a Mango selector (JSON), or "".
	Selector string
	// Headers are added to every request: a JSON object of strings, or "".
	Headers string
	// Attachments picks the attachment bodies a pull brings: "eager" (or
	// "", every body), "lazy" (none: the app fetches a body when it needs
	// it with Database.FetchAttachment) or "lazy-over=BYTES" (only bodies
	// of at most BYTES). Pushes always send every body the store has.
	Attachments string
	// Throttle, when positive, bounds the documents written a second, each
	// way (0: as fast as it goes): a low-power mode for a sync that runs
	// while the app is in the background, leaving the CPU to the
	// foreground and the battery alone.
	Throttle int
}

// NewReplicatorConfig returns a two-way, one-shot configuration for url.
func NewReplicatorConfig(url string) *ReplicatorConfig {
	return &ReplicatorConfig{URL: url, Direction: "both"}
}

// TokenProvider is implemented by the app to hand out bearer tokens. It is
// called on a background thread and may block while it refreshes a token.
type TokenProvider interface {
	Token() (string, error)
}

// ReplicatorStatus is a snapshot of a replicator.
type ReplicatorStatus struct {
	// State is "stopped" (not started, finished or stopped), "starting",
	// "active" (transferring), "idle" (continuous and caught up), "offline"
	// (a peer is unreachable, a cluster node is down, or
	// SetNetworkAvailable(false): it retries or waits by itself),
	// "unauthorized" (the server refused the credentials, 401 or 403: with
	// a TokenProvider it waits and resumes as soon as Token returns another
	// token; with a Username and Password it stopped, and a new replicator
	// with other credentials is needed) or "error" (failed for good: the
	// database does not exist, a bad request; see LastError).
	State string
	// Counters over the replicator's life, as in CouchDB's replication log.
	DocsRead, DocsWritten, DocWriteFailures int64
	MissingChecked, MissingFound            int64
	// Pending counts the changes still to transfer, both ways; -1 when
	// unknown.
	Pending int64
	// PushPending counts the local documents changed after the last
	// checkpoint that the remote has not acknowledged yet; PullPending the
	// remote's changes not yet read or written (CouchDB's "pending", which
	// for a filtered pull counts every change). -1 when unknown (before a
	// session counted them; a pull from a server whose feed does not say),
	// or for a direction the replicator does not run.
	PushPending, PullPending int64
	// Completed counts the documents the replicator has handled since it
	// was made, both directions: written, refused, or found already
	// there. Total counts those known to be handled: Completed plus the
	// changes still to transfer, as far as the servers tell (CouchDB's
	// pending), growing as new changes arrive. Both only grow, Completed
	// <= Total, and Completed == Total once caught up: a progress bar is
	// Completed / Total (nothing to show while Total is 0).
	Completed, Total int64
	// LastSeq is the last checkpointed sequence of the source (JSON); for
	// "both", of the pull.
	LastSeq string
	// LastError is the latest error, "" if none. With State "error" it is
	// why the replicator stopped.
	LastError string
	// UpdatedMillis is when the status last changed, in Unix milliseconds.
	UpdatedMillis int64
}

// ReplicatorListener is the listener of SetListener: status changes and
// document errors in one. Replicator.AddChangeListener and
// AddDocumentListener register any number of listeners instead.
// Calls come one at a time on a background thread owned by the replicator
// (never the UI thread). Status updates are coalesced: a slow listener sees
// the latest status, not every intermediate one, and never the same status
// twice in a row. It may call Stop.
type ReplicatorListener interface {
	// OnStatus reports a change of state or progress.
	OnStatus(status *ReplicatorStatus)
	// OnDocumentError reports a revision the target refused or the source
	// could not provide; the replication goes on without it.
	OnDocumentError(docID, rev, message string)
}

// NewReplicator returns a stopped replicator between db and the remote
// database of config (copied: later changes to config have no effect). It
// does no I/O: a wrong URL shows up as the "error" state after Start,
// wrong credentials as "unauthorized".
func NewReplicator(db *Database, config *ReplicatorConfig) (r *Replicator, err error) {
	defer recoverTo(&err)
	if db == nil || config == nil {
		return nil, badRequest("database and config are required")
	}
	cfg := *config
	if cfg.Direction == "" {
		cfg.Direction = "both"
	}
	if cfg.Direction != "push" && cfg.Direction != "pull" && cfg.Direction != "both" {
		return nil, badRequest("direction must be push, pull or both, got %q", cfg.Direction)
	}
	if cfg.Throttle < 0 {
		return nil, badRequest("Throttle must not be negative, got %d", cfg.Throttle)
	}
	opts := sync.Options{Continuous: cfg.Continuous, CreateTarget: cfg.CreateTarget, Filter: cfg.Filter, Throttle: cfg.Throttle}
	att, err := sync.ParseAttachments(cfg.Attachments)
	if err != nil {
		return nil, badRequest("Attachments: %v", err)
	}
	if att.IsLazy() && cfg.Direction == "push" {
		return nil, badRequest("Attachments %q applies to pull and both, not push", cfg.Attachments)
	}
	opts.Attachments = att
	if err := decodeJSONField("DocIDs", cfg.DocIDs, &opts.DocIDs); err != nil {
		return nil, err
	}
	if err := decodeJSONField("QueryParams", cfg.QueryParams, &opts.QueryParams); err != nil {
		return nil, err
	}
	if cfg.Selector != "" {
		if !json.Valid([]byte(cfg.Selector)) {
			return nil, badRequest("Selector is not valid JSON")
		}
		opts.Selector = json.RawMessage(cfg.Selector)
	}
	copts := &couch.Options{Username: cfg.Username, Password: cfg.Password, Session: cfg.Session, Observer: logRequest}
	if err := decodeJSONField("Headers", cfg.Headers, &copts.Headers); err != nil {
		return nil, err
	}
	if tp := cfg.Tokens; tp != nil {
		copts.TokenFunc = func(context.Context) (string, error) { return callTokens(tp) }
	}
	remote, err := couch.New(cfg.URL, copts)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if err := db.check(); err != nil {
		return nil, err
	}
	r = &Replicator{db: db, cfg: cfg, remote: remote}
	// A push fetches a body a lazy pull left behind from the remote when
	// the remote does not show it has it.
	opts.FetchMissing = localpeer.FetchFrom(remote, db.db)
	opts.OnEvent = r.onEvent
	r.sup, err = sync.NewSupervisor(sync.SupervisorConfig{Local: localpeer.New(db.db), Remote: remote,
		Direction: sync.Direction(cfg.Direction), Options: opts, CaughtUp: r.resolveConflicts})
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return r, nil
}

// decodeJSONField decodes an optional JSON-valued config field.
func decodeJSONField(name, s string, v any) error {
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return badRequest("%s: %v", name, err)
	}
	return nil
}

func callTokens(tp TokenProvider) (tok string, err error) {
	defer recoverTo(&err)
	return tp.Token()
}

// logRequest logs the remote's HTTP requests at debug level (no
// credentials: the event holds none).
func logRequest(ev couch.RequestEvent) {
	if ev.Err != nil {
		logf(LevelDebug, "%s %s -> %d (attempt %d): %v", ev.Method, ev.Path, ev.Status, ev.Attempt, ev.Err)
		return
	}
	logf(LevelDebug, "%s %s -> %d in %s", ev.Method, ev.Path, ev.Status, ev.Duration.Round(time.Millisecond))
}
