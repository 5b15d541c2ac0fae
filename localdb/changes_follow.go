package localdb

import (
	"context"
	"strconv"
	"time"

	"github.com/settee/settee/couchdoc"
)

// Feed is the kind of changes feed Follow runs, as CouchDB's feed
// parameter.
type Feed int

const (
	// FeedNormal gives the rows after since and returns.
	FeedNormal Feed = iota
	// FeedLongpoll waits until there is at least one row to give, gives
	// the rows and returns.
	FeedLongpoll
	// FeedContinuous gives rows as the store commits them until ctx is
	// done, the limit is reached or the timeout passes with nothing new.
	FeedContinuous
)

// FollowOptions are the options of Follow. The embedded ChangesOptions
// select and shape the rows as for Changes; its Since is ignored (Follow
// has its own argument) and Descending only applies to FeedNormal.
type FollowOptions struct {
	ChangesOptions
	Feed Feed
	// Timeout ends a longpoll or continuous feed (without error) when it
	// has waited this long for a row to give; 0 waits until ctx is done.
	Timeout time.Duration
}

// Follow runs the changes feed after since: the rows already committed,
// then, for FeedLongpoll and FeedContinuous, the rows of later commits
// made through any connection to the file, in this process or another.
//
// Commits made in this process (through this DB or another DB open on the
// same file) wake the feed at once. Other processes' are noticed as
// Options.Watch says: by default the operating system reports the writes
// to the file's write-ahead log while a feed waits, and only then does a
// dedicated connection ask SQLite whether another connection committed
// (PRAGMA data_version, which a checkpoint that resets the log cannot
// fool) and read the feed's head; nothing runs while nothing is written.
// Where that notification is unavailable the check runs every
// PollInterval instead. The documents are never polled.
//
// Each document appears once per pass, at its latest sequence; fn is
// called one row at a time, never concurrently. A Limit counts the rows
// given over the whole feed.
//
// It returns the feed's position, the since to pass to resume: the last
// row's sequence, or further when the feed scanned past rows a filter
// left out. A feed that timed out, reached its limit or (longpoll) gave
// its rows returns a nil error. When ctx is done it returns the position
// and ctx's error, ErrClosed when the database closes, and fn's error as
// is. Heartbeats are the caller's: fn is not called while the feed waits.
func (db *DB) Follow(ctx context.Context, since int64, opts FollowOptions, fn func(*Change) error) (int64, error) {
	copts := opts.ChangesOptions
	copts.Since = since
	if opts.Feed == FeedNormal {
		last, err := db.Changes(ctx, copts, fn)
		if err != nil {
			return since, err
		}
		return max(last, since), nil
	}
	copts.Descending = false
	limit, given := copts.Limit, 0
	count := func(c *Change) error {
		given++
		return fn(c)
	}
	woke := int64(0)
	for {
		copts.Since = since
		if limit > 0 {
			copts.Limit = limit - given
		}
		before := given
		last, err := db.Changes(ctx, copts, count)
		if err != nil {
			return since, err
		}
		if limit > 0 && given >= limit {
			// The limit cut the pass: resume right after its last row,
			// which may lie before woke (rows past it are still to give).
			return max(since, last), nil
		}
		// This pass ran to the end and began after woke was seen, so it
		// covered at least up to woke even when a filter kept no row:
		// never wake twice for it.
		since = max(since, last, woke)
		if opts.Feed == FeedLongpoll && given > before {
			return since, nil
		}
		woke, err = db.waitForChange(ctx, since, opts.Timeout)
		if err != nil {
			return since, err
		}
		if woke == 0 {
			return since, nil // the timeout passed with nothing new
		}
	}
}

// waitForChange blocks until the update sequence passes since and returns
// it, or returns 0 when timeout (if positive) passes first. It waits on
// commit notifications, its own and the watcher's, never by reading the
// documents.
func (db *DB) waitForChange(ctx context.Context, since int64, timeout time.Duration) (int64, error) {
	if err := db.addWaiter(); err != nil {
		return 0, err
	}
	defer db.removeWaiter()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	for {
		db.nmu.Lock()
		ch := db.notify
		db.nmu.Unlock()
		if s := db.updateSeq.Load(); s > since {
			return s, nil
		}
		if db.isClosing() {
			return 0, ErrClosed
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-expired:
			return 0, nil
		case <-ch:
		}
	}
}

// Row returns the change as a couchdoc.Change, CouchDB's changes row with
// an integer seq (the form package sync carries).
func (c *Change) Row() (*couchdoc.Change, error) {
	row := &couchdoc.Change{
		Seq:     strconv.AppendInt(nil, c.Seq, 10),
		ID:      c.ID,
		Deleted: c.Deleted,
		Changes: make([]couchdoc.ChangeRev, len(c.Revs)),
	}
	for i, r := range c.Revs {
		row.Changes[i].Rev = r
	}
	if c.Doc != nil {
		b, err := c.Doc.MarshalJSON()
		if err != nil {
			return nil, err
		}
		row.Doc = b
	}
	return row, nil
}

// MarshalJSON encodes the change as CouchDB's changes row (see Row), with
// "<", ">" and "&" left as they are, as CouchDB sends them. It writes the
// row directly around the document's own encoding (couchdoc.Doc.AppendJSON,
// compact): encoding Row with encoding/json copied and re-scanned the
// document's bytes to compact them, twice with a caller's json.Encoder,
// which made that most of settee serve's CPU for a feed with
// include_docs=true (BenchmarkChangeMarshal).
func (c *Change) MarshalJSON() ([]byte, error) {
	size := 64 + len(c.ID) + 40*len(c.Revs)
	if c.Doc != nil {
		size += len(c.Doc.Body) + 128
	}
	return c.AppendJSON(make([]byte, 0, size))
}

// AppendJSON appends the change's MarshalJSON encoding to dst: a feed's
// writer reuses one buffer for all its rows (a new one per row was a
// tenth of what settee serve allocated in a pull).
func (c *Change) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, c.Seq, 10)
	dst = append(dst, `,"id":`...)
	dst = couchdoc.AppendJSONString(dst, c.ID, false)
	dst = append(dst, `,"changes":[`...)
	for i, r := range c.Revs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"rev":`...)
		dst = couchdoc.AppendJSONString(dst, r, false)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if c.Deleted {
		dst = append(dst, `,"deleted":true`...)
	}
	if c.Doc != nil {
		dst = append(dst, `,"doc":`...)
		var err error
		if dst, err = c.Doc.AppendJSON(dst); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}
