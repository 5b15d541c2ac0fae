package couch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

// defaultHeartbeat keeps continuous feeds that set none alive.
const defaultHeartbeat = 10 * time.Second

// Changes reads the changes feed with style=all_docs, calling fn for each
// row in feed order, and returns the feed's last_seq.
//
// DocIDs and Selector are sent in a POST body (filter=_doc_ids,
// filter=_selector); Filter names a design document filter with
// QueryParams. Feed "longpoll" waits for a first change (or opts.Timeout);
// feed "continuous" with a Timeout returns when the server ends the feed
// after that much silence; without one it runs until ctx is done or fn
// fails, reconnecting from the last row's seq when the server ends the feed
// (and, up to Options.Retries times in a row, when the connection drops),
// and returns the last seq seen with ctx's error or the failure.
// An error from fn stops the feed and is returned as is.
func (db *DB) Changes(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	if opts.Feed == "continuous" && opts.Timeout <= 0 {
		return db.followChanges(ctx, opts, fn)
	}
	return db.changesOnce(ctx, opts, fn)
}

// followChanges runs a continuous feed until ctx is done.
func (db *DB) followChanges(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	since := opts.Since
	failures := 0
	for {
		gotRow := false
		var fnErr error
		last, err := db.changesOnce(ctx, opts, func(c *couchdoc.Change) error {
			if fnErr = fn(c); fnErr != nil {
				return fnErr
			}
			gotRow, since = true, c.Seq
			return nil
		})
		if err == nil && len(last) > 0 {
			since = last
		}
		opts.Since = since
		switch {
		case ctx.Err() != nil:
			return since, ctx.Err()
		case fnErr != nil:
			return since, fnErr
		case err == nil && gotRow:
			failures = 0
			continue // the server ended the feed: follow on
		case err == nil:
			failures = 0 // an idle feed ended: follow on after a pause
		case !IsRetryable(err):
			return since, err
		case gotRow:
			failures = 0
		}
		if err != nil {
			if failures >= db.opts.Retries {
				return since, err
			}
			db.retries.Add(1)
		}
		t := time.NewTimer(backoff(failures, db.opts.BackoffBase, db.opts.BackoffMax))
		failures++
		select {
		case <-ctx.Done():
			t.Stop()
			return since, ctx.Err()
		case <-t.C:
		}
	}
}

func (db *DB) changesOnce(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	r, err := db.changesRequest(opts)
	if err != nil {
		return nil, err
	}
	// Some peers (pouchdb-server) ignore timeout= on longpoll and continuous
	// feeds: end the feed here when it stays quiet that long.
	var quiet atomic.Bool
	since := opts.Since
	if opts.Timeout > 0 && opts.Feed != "" && opts.Feed != "normal" {
		limit := opts.Timeout + max(opts.Timeout/2, 500*time.Millisecond)
		qctx, cancel := context.WithCancel(ctx)
		defer cancel()
		timer := time.AfterFunc(limit, func() { quiet.Store(true); cancel() })
		defer timer.Stop()
		ctx, inner := qctx, fn
		fn = func(c *couchdoc.Change) error {
			timer.Stop() // a slow consumer is not a quiet feed
			defer timer.Reset(limit)
			if err := inner(c); err != nil {
				return err
			}
			since = c.Seq
			return nil
		}
		last, err := db.readChanges(ctx, r, opts, fn)
		if err != nil && quiet.Load() && errors.Is(err, context.Canceled) {
			return since, nil
		}
		return last, err
	}
	return db.readChanges(ctx, r, opts, fn)
}

func (db *DB) readChanges(ctx context.Context, r *request, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	resp, err := db.do(ctx, r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var last json.RawMessage
	pending := int64(-1)
	if opts.Feed == "continuous" {
		last, err = wire.ReadContinuousChanges(resp.Body, fn)
	} else if r.query.Has("seq_interval") {
		last, pending, err = wire.ReadChangesSparse(resp.Body, fn)
	} else {
		last, pending, err = wire.ReadChangesPending(resp.Body, fn)
	}
	if err != nil {
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
		var me *wire.MalformedError
		if errors.As(err, &me) {
			return last, db.malformed(r, err)
		}
		return last, err
	}
	drainClose(resp.Body)
	if pending >= 0 && opts.OnPending != nil {
		opts.OnPending(pending)
	}
	return last, nil
}

func (db *DB) changesRequest(opts sync.ChangesOptions) (*request, error) {
	q := url.Values{}
	q.Set("style", "all_docs")
	if opts.IncludeDocs {
		q.Set("include_docs", "true")
	}
	if s := seqParam(opts.Since); s != "" {
		q.Set("since", s)
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	r := &request{method: http.MethodGet, path: "/_changes", query: q}
	switch opts.Feed {
	case "", "normal":
		if opts.Limit > 0 {
			// CouchDB computes a row's clustered seq, a fifth of the feed's
			// CPU, only every that many rows; the batch is checkpointed at
			// its last_seq, which it always sends. Other peers ignore it.
			q.Set("seq_interval", strconv.Itoa(opts.Limit))
		}
	case "longpoll", "continuous":
		q.Set("feed", opts.Feed)
		hb := opts.Heartbeat
		if hb <= 0 && opts.Feed == "continuous" {
			hb = defaultHeartbeat
		}
		if hb > 0 {
			q.Set("heartbeat", strconv.FormatInt(hb.Milliseconds(), 10))
			r.idle = 2*hb + db.opts.Timeout
		} else {
			r.idle = db.opts.Timeout
		}
		if opts.Timeout > 0 {
			q.Set("timeout", strconv.FormatInt(opts.Timeout.Milliseconds(), 10))
			if hb <= 0 {
				r.idle = opts.Timeout + db.opts.Timeout
			}
		}
	default:
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "unknown changes feed %q", opts.Feed)
	}
	var body any
	switch {
	case len(opts.DocIDs) > 0:
		q.Set("filter", "_doc_ids")
		body = map[string][]string{"doc_ids": opts.DocIDs}
	case len(bytes.TrimSpace(opts.Selector)) > 0:
		if !json.Valid(opts.Selector) {
			return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "selector is not valid JSON")
		}
		q.Set("filter", "_selector")
		body = map[string]json.RawMessage{"selector": opts.Selector}
	case opts.Filter != "":
		q.Set("filter", opts.Filter)
		for k, v := range opts.QueryParams {
			if q.Has(k) {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "filter query parameter %q clashes with a feed parameter", k)
			}
			q.Set(k, v)
		}
	}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r.method, r.body, r.contentType = http.MethodPost, b, "application/json"
	}
	return r, nil
}

// seqParam renders an opaque sequence for the since parameter: a JSON
// string without its quotes, anything else (numbers, arrays) as is.
func seqParam(seq json.RawMessage) string {
	seq = bytes.TrimSpace(seq)
	if len(seq) == 0 || string(seq) == "null" {
		return ""
	}
	if seq[0] == '"' {
		var s string
		if err := json.Unmarshal(seq, &s); err == nil {
			return s
		}
	}
	return string(seq)
}
