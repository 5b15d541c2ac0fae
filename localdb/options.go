package localdb

import (
	"time"

	"github.com/settee/settee/couchdoc"
)

// Options tune a database when it is opened. The zero value is usable.
type Options struct {
	// RevsLimit is how many revisions of history a document keeps before
	// older ones are stemmed (CouchDB's _revs_limit). Default 1000.
	RevsLimit int
	// ReadConns is the size of each read-only connection pool (reads, and
	// Mango queries: see readpool.go). Default 4.
	ReadConns int
	// NoCreate makes Open refuse a path that holds no store yet (a
	// missing or empty file) with ErrNoStore instead of creating one: for
	// tools that only read, so that a typo creates nothing.
	NoCreate bool
	// Watch picks how live feeds (Follow) hear of commits made by other
	// processes; the zero value is WatchNotify. PollInterval is the
	// interval of WatchPoll and of WatchNotify's fallback; default
	// DefaultPollInterval.
	Watch        WatchMode
	PollInterval time.Duration
	// Key, when set (KeySize random bytes the app keeps in a keystore),
	// encrypts the store at rest: every page of the file, its WAL and its
	// journals is sealed with it (AES-256-GCM), and the file shows no
	// SQLite header. Open makes a new store encrypted; an existing one
	// must have been made with the same key (ErrWrongKey), and a key for
	// a plain store is ErrPlainStore. The key is never written anywhere.
	Key []byte
	// KeySalt, with Key, is the salt (8 bytes) written in a new store's
	// header instead of a random one: for a Key stretched from a
	// passphrase with it (StoreSalt reads it back). Ignored for an
	// existing store.
	KeySalt []byte
}

// Info is a database's summary, as CouchDB's GET /{db} gives it.
type Info struct {
	DocCount    int64 `json:"doc_count" db:"doc_count"`
	DocDelCount int64 `json:"doc_del_count" db:"doc_del_count"`
	UpdateSeq   int64 `json:"update_seq" db:"update_seq"`
	// PurgeSeq counts the purge requests the store has applied.
	PurgeSeq int64  `json:"purge_seq" db:"purge_seq"`
	UUID     string `json:"uuid"`
}

// GetOptions are the options of CouchDB's GET /{db}/{docid}.
type GetOptions struct {
	// Rev reads a specific revision instead of the winner.
	Rev string
	// Revs fills Doc.Revisions (the revision history).
	Revs bool
	// RevsInfo fills Doc.RevsInfo.
	RevsInfo bool
	// Conflicts fills Doc.Conflicts; DeletedConflicts fills Doc.DeletedConflicts.
	Conflicts        bool
	DeletedConflicts bool
	// Latest returns the leaf (or leaves) descending from Rev instead of Rev.
	Latest bool
	// Attachments returns attachment bodies instead of stubs. With AttsSince,
	// only attachments newer than the listed revisions get bodies.
	Attachments bool
	AttsSince   []string
	// LocalSeq fills Doc.LocalSeq.
	LocalSeq bool
}

// OpenRev is one answer of DB.OpenRevs: a document, or the rev that is
// missing.
type OpenRev struct {
	Doc     *couchdoc.Doc
	Missing string
}

// RevsRequest names the revisions of one document to read with
// DB.OpenRevsBatch.
type RevsRequest struct {
	ID string
	// Revs lists the revisions to read; nil reads every leaf.
	Revs []string
	// AttsSince, when not nil, replaces GetOptions.AttsSince for this
	// document (a replication sends each document's own ancestors).
	AttsSince []string
}

// ChangesOptions are the options of the store's changes feed.
type ChangesOptions struct {
	// Since is the sequence to start after (0 for everything).
	Since int64
	// Limit bounds the rows; 0 means no limit.
	Limit int
	// Descending reads the feed newest first.
	Descending bool
	// AllDocs lists every leaf (style=all_docs) instead of the winner only.
	AllDocs bool
	// IncludeDocs fills Change.Doc with the winning revision; Conflicts adds
	// its _conflicts.
	IncludeDocs bool
	Conflicts   bool
	// DocIDs restricts the feed to these documents.
	DocIDs []string
	// Filter, when set, keeps only the rows whose winning revision it
	// accepts. It is given the winning revision's document (without
	// attachment bodies).
	Filter func(doc *couchdoc.Doc) bool
}

// Change is one row of the store's changes feed. Its JSON (MarshalJSON)
// is CouchDB's changes row, the one every adapter sends: {"seq":N,"id":
// "...","changes":[{"rev":"..."}],"deleted":true,"doc":{...}}.
type Change struct {
	Seq     int64
	ID      string
	Revs    []string // winner first, then the other leaves with AllDocs
	Deleted bool     // the winning revision is a tombstone
	Doc     *couchdoc.Doc
}

// AllDocsOptions are the options of CouchDB's _all_docs.
type AllDocsOptions struct {
	// StartKey and EndKey bound the id range; empty means unbounded.
	StartKey, EndKey string
	// ExclusiveEnd leaves EndKey out (CouchDB's inclusive_end=false).
	ExclusiveEnd bool
	// Keys lists the ids to return, in order; rows for missing ids carry an
	// error, deleted ones Deleted.
	Keys        []string
	Limit, Skip int
	Descending  bool
	IncludeDocs bool
	Conflicts   bool
}

// AllDocsRow is one row of _all_docs.
type AllDocsRow struct {
	ID      string
	Rev     string
	Deleted bool
	Doc     *couchdoc.Doc
	// Error is "not_found" for a requested key that does not exist.
	Error string
}
