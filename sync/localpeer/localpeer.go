package localpeer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strconv"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/filter"
	"github.com/settee/settee/sync"
)

// Peer is a sync.Peer over a local store. Its sequences are the store's
// int64 sequences as JSON numbers.
type Peer struct {
	db *localdb.DB
}

var (
	_ sync.Peer       = (*Peer)(nil)
	_ sync.BulkGetter = (*Peer)(nil)
	_ sync.Identifier = (*Peer)(nil)
	_ sync.Creator    = (*Peer)(nil)

	_ sync.PendingCounter = (*Peer)(nil)

	_ sync.StubReader       = (*Peer)(nil)
	_ sync.LazyWriter       = (*Peer)(nil)
	_ sync.AttachmentGetter = (*Peer)(nil)
)

// New returns a peer over db. The caller keeps ownership of db (closing
// the peer is not needed; close db when the replications are done).
func New(db *localdb.DB) *Peer { return &Peer{db: db} }

// DB returns the store.
func (p *Peer) DB() *localdb.DB { return p.db }

// String names the store by its file.
func (p *Peer) String() string { return "local:" + p.db.Path() }

// UUID returns the store's persistent UUID (the replication id uses it).
func (p *Peer) UUID() string { return p.db.UUID() }

// SeedUUIDs returns the UUIDs of the stores the store was cloned from
// (localdb.Clone), so its first replications resume from their checkpoints.
func (p *Peer) SeedUUIDs() []string { return p.db.Seeds() }

// Create reports that the store exists: couchdoc.ErrFileExists.
func (p *Peer) Create(ctx context.Context) error { return couchdoc.ErrFileExists }

// Info returns the store's counts and update sequence.
func (p *Peer) Info(ctx context.Context) (*sync.PeerInfo, error) {
	info, err := p.db.Info(ctx)
	if err != nil {
		return nil, err
	}
	return &sync.PeerInfo{
		DBName:            filepath.Base(p.db.Path()),
		DocCount:          info.DocCount,
		DocDelCount:       info.DocDelCount,
		UpdateSeq:         seqJSON(info.UpdateSeq),
		InstanceStartTime: "0",
	}, nil
}

// GetLocal reads _local/<id> as JSON with _id and _rev.
func (p *Peer) GetLocal(ctx context.Context, id string) (json.RawMessage, error) {
	doc, err := p.db.GetLocal(ctx, couchdoc.LocalPrefix+id)
	if err != nil {
		return nil, err
	}
	return doc.MarshalJSON()
}

// PutLocal writes _local/<id>; body's _rev must be the current one.
func (p *Peer) PutLocal(ctx context.Context, id string, body json.RawMessage) (string, error) {
	doc, err := couchdoc.ParseDoc(body)
	if err != nil {
		return "", err
	}
	doc.ID = couchdoc.LocalPrefix + id
	return p.db.PutLocal(ctx, doc)
}

// parseSeq reads a sequence this peer produced: a JSON number (or a
// string holding one, as some tools quote sequences).
func parseSeq(raw json.RawMessage) (int64, error) {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || string(s) == "null" {
		return 0, nil
	}
	if s[0] == '"' {
		var str string
		if err := json.Unmarshal(s, &str); err != nil {
			return 0, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid since sequence %s", s)
		}
		s = []byte(str)
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || n < 0 {
		return 0, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid since sequence %q for the local store", s)
	}
	return n, nil
}

func seqJSON(n int64) json.RawMessage { return strconv.AppendInt(nil, n, 10) }

// Changes reads the store's feed (style=all_docs) with localdb.Follow: a
// longpoll feed with no change waits for one, a continuous feed follows
// the store until ctx is done, each woken by commits from any process;
// opts.Timeout ends a wait with nothing new. A normal or longpoll feed
// reports its pending count to opts.OnPending (see pendingAfter). Selectors are matched with
// internal/mango against the winning revision; a design document filter
// ("ddoc/name") runs its JavaScript function (package localdb/filter).
func (p *Peer) Changes(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	since, err := parseSeq(opts.Since)
	if err != nil {
		return nil, err
	}
	fopts := localdb.FollowOptions{
		ChangesOptions: localdb.ChangesOptions{Limit: opts.Limit, AllDocs: true, DocIDs: opts.DocIDs},
		Timeout:        opts.Timeout,
	}
	switch opts.Feed {
	case "longpoll":
		fopts.Feed = localdb.FeedLongpoll
	case "continuous":
		fopts.Feed = localdb.FeedContinuous
	}
	if opts.Filter != "" {
		// The store runs the design document's filter as CouchDB would
		// (package localdb/filter), with QueryParams as req.query.
		ddoc, name, ok := filter.Split(opts.Filter)
		if !ok {
			return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "`filter` must be of the form `designname/filtername`")
		}
		fn, err := filter.Func(ctx, p.db, ddoc, name, &filter.Request{Query: opts.QueryParams, Path: []string{"_changes"}})
		if err != nil {
			return nil, err
		}
		fopts.Filter = fn
	}
	if len(opts.Selector) > 0 {
		sel, err := mango.Parse(opts.Selector)
		if err != nil {
			return nil, err
		}
		fopts.Filter = sel.MatchDoc
	}
	last, err := p.db.Follow(ctx, since, fopts, func(c *localdb.Change) error {
		row, err := c.Row()
		if err != nil {
			return err
		}
		return fn(row)
	})
	if err == nil && opts.OnPending != nil && fopts.Feed != localdb.FeedContinuous {
		n, err := p.pendingAfter(ctx, last, opts)
		if err != nil {
			return seqJSON(last), err
		}
		opts.OnPending(n)
	}
	return seqJSON(last), err
}

// PendingChanges counts the changes after opts.Since that a normal feed
// with opts would give, from the seq index: exact for doc_ids and
// unfiltered feeds, every change for a selector (see pendingAfter).
func (p *Peer) PendingChanges(ctx context.Context, opts sync.ChangesOptions) (int64, error) {
	since, err := parseSeq(opts.Since)
	if err != nil {
		return 0, err
	}
	return p.pendingAfter(ctx, since, opts)
}

// pendingAfter counts the changes after seq that the feed opts describes
// would give: exact for doc_ids and unfiltered feeds, from the seq index;
// for a selector, every change after seq (CouchDB's count, an upper bound:
// matching would read every document).
func (p *Peer) pendingAfter(ctx context.Context, seq int64, opts sync.ChangesOptions) (int64, error) {
	if len(opts.DocIDs) > 0 {
		return p.db.PendingChangesOf(ctx, seq, opts.DocIDs)
	}
	return p.db.PendingChanges(ctx, seq)
}

// RevsDiff asks the store which revisions it lacks.
func (p *Peer) RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error) {
	return p.db.RevsDiff(ctx, revs)
}

// OpenRevs reads revisions with their history, the bodies of attachments
// newer than attsSince (large ones streamed lazily from the store) and
// stubs for the others.
func (p *Peer) OpenRevs(ctx context.Context, id string, revs []string, attsSince []string, fn func(*couchdoc.Doc, error) error) error {
	res, err := p.db.OpenRevs(ctx, id, revs, localdb.GetOptions{Revs: true, Latest: true, Attachments: true, AttsSince: attsSince})
	if err != nil {
		return err
	}
	for i, r := range res {
		if r.Doc == nil {
			err = fn(nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing revision %s of %q", r.Missing, id))
		} else {
			err = fn(r.Doc, nil)
			closeBodies(r.Doc)
			res[i].Doc = nil
		}
		if err != nil {
			for _, rest := range res[i+1:] {
				if rest.Doc != nil {
					closeBodies(rest.Doc)
				}
			}
			return err
		}
	}
	return nil
}

func closeBodies(doc *couchdoc.Doc) {
	for _, a := range doc.Attachments {
		if c, ok := a.Body.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

// BulkGet reads the requested revisions straight from the store, many
// documents per read transaction (localdb.OpenRevsBatch). Consecutive
// requests for one document with the same AttsSince are read together, as
// one open_revs. A revision the store lacks, or a malformed one, is a
// per-revision error handed to fn (a *wire.RevError naming the document,
// as sync/couch gives); only store errors and fn's end the call.
func (p *Peer) BulkGet(ctx context.Context, reqs []sync.BulkGetRequest, fn func(*couchdoc.Doc, error) error) error {
	return p.bulkGet(ctx, reqs, true, fn)
}

func (p *Peer) bulkGet(ctx context.Context, reqs []sync.BulkGetRequest, atts bool, fn func(*couchdoc.Doc, error) error) error {
	batch := make([]localdb.RevsRequest, 0, len(reqs))
	for i := 0; i < len(reqs); {
		j := i + 1
		for j < len(reqs) && reqs[j].ID == reqs[i].ID && equalStrings(reqs[j].AttsSince, reqs[i].AttsSince) {
			j++
		}
		revs := make([]string, 0, j-i)
		for _, r := range reqs[i:j] {
			revs = append(revs, r.Rev)
		}
		batch = append(batch, localdb.RevsRequest{ID: reqs[i].ID, Revs: revs, AttsSince: reqs[i].AttsSince})
		i = j
	}
	opts := localdb.GetOptions{Revs: true, Latest: true, Attachments: atts}
	return p.db.OpenRevsBatch(ctx, batch, opts, func(id string, r localdb.OpenRev, err error) error {
		var ce *couchdoc.Error
		switch {
		case errors.As(err, &ce):
			return fn(nil, &wire.RevError{ID: id, Err: ce})
		case err != nil:
			return fn(nil, err)
		case r.Doc == nil:
			return fn(nil, &wire.RevError{ID: id, Rev: r.Missing, Err: couchdoc.Errorf(couchdoc.ErrNotFound, "missing revision %s of %q", r.Missing, id)})
		}
		err = fn(r.Doc, nil)
		closeBodies(r.Doc)
		return err
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BulkDocs stores revisions as they are (new_edits=false) in one
// transaction and returns the refused ones, and those the store had
// already (Existing: another writer, such as a second sync of the same
// store, stored them first), so that each replication counts only what it
// wrote.
func (p *Peer) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	res, err := p.db.BulkDocs(ctx, docs, false)
	if err != nil {
		return nil, err
	}
	var told []couchdoc.DocResult
	for _, r := range res {
		if r.Error != "" || r.Existing {
			told = append(told, r)
		}
	}
	return told, nil
}

// InlineAttachmentMax lets the replicator batch documents with up to
// 1 MiB of attachment bytes: one store transaction for many of them costs
// far less than one each, and the bytes are bounded by the batch size.
func (p *Peer) InlineAttachmentMax() int64 { return 1 << 20 }

// PutDoc stores one revision as it is, streaming its attachment bodies
// into the store.
func (p *Peer) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	res, err := p.db.BulkDocs(ctx, []*couchdoc.Doc{doc}, false)
	if err != nil {
		return err
	}
	for _, r := range res {
		if e := r.Err(); e != nil {
			return e
		}
	}
	return nil
}

// EnsureFullCommit is a no-op: every store transaction is durable when it
// commits.
func (p *Peer) EnsureFullCommit(ctx context.Context) error { return nil }
