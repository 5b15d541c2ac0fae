package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	gosync "sync"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// maxFeedWait is CouchDB's changes_timeout: the longest a longpoll or
// continuous feed waits without a heartbeat, and the longest heartbeat.
const maxFeedWait = 60 * time.Second

// feedParams are the parsed parameters of a _changes request.
type feedParams struct {
	feed      string
	opts      localdb.ChangesOptions
	sinceNow  bool
	heartbeat time.Duration // 0: none
	timeout   time.Duration // 0: never (heartbeat set)
	// ddocFilter is a filter function named "ddoc/name", and viewFilter
	// the view of filter=_view (filters.go).
	ddocFilter, viewFilter string
	// attachments inlines the bodies of include_docs' attachments.
	attachments bool
}

func parseFeedParams(r *http.Request) (*feedParams, error) {
	q := newQuery(r.URL)
	p := &feedParams{feed: q.str("feed")}
	switch p.feed {
	case "":
		p.feed = "normal"
	case "normal", "longpoll", "continuous", "eventsource":
	default:
		return nil, badRequest("Supported `feed` types: normal, continuous, longpoll, eventsource")
	}
	if since := q.str("since"); since != "" && since != "0" {
		if since == "now" {
			p.sinceNow = true
		} else {
			n, err := parseSeq(since)
			if err != nil {
				return nil, err
			}
			p.opts.Since = n
		}
	}
	p.opts.Limit = int(q.int("limit", 0))
	if q.has("limit") && p.opts.Limit == 0 {
		p.opts.Limit = 1 // CouchDB treats limit=0 as 1
	}
	p.opts.Descending = q.bool("descending")
	switch q.str("style") {
	case "", "main_only":
	case "all_docs":
		p.opts.AllDocs = true
	default:
		return nil, badRequest("Invalid style: %q", q.str("style"))
	}
	p.opts.IncludeDocs = q.bool("include_docs")
	p.opts.Conflicts = q.bool("conflicts")
	p.attachments = p.opts.IncludeDocs && q.bool("attachments")
	if q.has("heartbeat") {
		hb := q.str("heartbeat")
		if hb == "true" || hb == "" {
			p.heartbeat = maxFeedWait
		} else if ms, err := parseInt(hb); err == nil && ms > 0 {
			p.heartbeat = min(time.Duration(ms)*time.Millisecond, maxFeedWait)
		} else {
			return nil, badRequest("Invalid heartbeat value: %q", hb)
		}
	}
	p.timeout = maxFeedWait
	if ms := q.int("timeout", -1); ms >= 0 {
		p.timeout = min(max(time.Duration(ms)*time.Millisecond, time.Millisecond), maxFeedWait)
	}
	if p.heartbeat > 0 {
		p.timeout = 0
	}
	var body struct {
		DocIDs   []string        `json:"doc_ids"`
		Selector json.RawMessage `json:"selector"`
		Fields   json.RawMessage `json:"fields"`
	}
	if r.Method == http.MethodPost {
		b, err := readBody(r)
		if err != nil {
			return nil, err
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			if err := decodeJSON(b, &body); err != nil {
				return nil, err
			}
		}
	}
	switch filter := q.str("filter"); filter {
	case "":
	case "_doc_ids":
		if body.DocIDs == nil {
			q.json("doc_ids", &body.DocIDs)
		}
		if body.DocIDs == nil {
			return nil, badRequest("`doc_ids` filter parameter is not a list of doc ids.")
		}
		p.opts.DocIDs = body.DocIDs
	case "_selector":
		if r.Method != http.MethodPost {
			return nil, badRequest("Selector must be specified in POST payload")
		}
		sel, err := changesSelector(body.Selector, body.Fields)
		if err != nil {
			return nil, err
		}
		p.opts.Filter = sel.MatchDoc
	case "_design":
		p.opts.Filter = func(d *couchdoc.Doc) bool { return strings.HasPrefix(d.ID, couchdoc.DesignPrefix) }
	case "_view":
		p.viewFilter = q.str("view")
		if p.viewFilter == "" {
			return nil, badRequest("`view` filter parameter is not provided.")
		}
	default:
		if strings.HasPrefix(filter, "_") {
			return nil, badRequest("unknown builtin filter name")
		}
		p.ddocFilter = filter
	}
	if q.err != nil {
		return nil, q.err
	}
	return p, nil
}

// parseSeq reads a since value: an integer, or a CouchDB-style "N-opaque"
// string (possibly JSON-quoted) of which the integer prefix counts.
func parseSeq(s string) (int64, error) {
	s = strings.Trim(s, `"`)
	if i := strings.IndexByte(s, '-'); i > 0 {
		s = s[:i]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest("Malformed sequence supplied in 'since' parameter.")
	}
	return n, nil
}

// feedWriter writes rows of a normal/longpoll feed ({"results":[...]}) or
// of a continuous feed (one JSON object per line). Its methods may be
// called from the feed and from the heartbeat goroutine: mu orders them.
type feedWriter struct {
	mu         gosync.Mutex
	w          http.ResponseWriter
	continuous bool
	// eventsource writes continuous rows as server-sent events.
	eventsource bool
	// etag, for a normal feed, identifies its answer (CouchDB sends one).
	etag string
	// inline, when set, rereads a row's document with attachment bodies.
	inline func(*couchdoc.Doc) (*couchdoc.Doc, error)
	// view is how the reader may see documents (replicatorView).
	view func(*couchdoc.Doc)
	// pending counts the changes after a seq, for the closing line.
	pending func(seq int64) int64
	started bool
	// committed is set once the status and headers went out: before
	// that, a normal or longpoll feed holds its first rows (held, heldRows
	// bytes of rows) as CouchDB's delayed response does, so that an error
	// among them is answered as an error.
	committed bool
	held      []byte
	heldRows  int
	rows      int
	wrote     bool // a row or heartbeat since the last heartbeat tick
	err       error
	// buf is the last row's encoding, reused for the next (rows come one
	// at a time, from the feed's goroutine).
	buf []byte
	bw  *bufio.Writer // between write and w, made by the first write
}

// chunkedResponseBuffer is CouchDB's [chttpd] chunked_response_buffer
// default: the bytes of rows a feed holds before its answer starts.
const chunkedResponseBuffer = 1490

func (f *feedWriter) start() {
	if f.started {
		return
	}
	f.started = true
	if f.continuous {
		f.commit()
		return
	}
	f.held = append(f.held[:0], "{\"results\":[\n"...)
}

// commit sends the status and headers, then what was held.
func (f *feedWriter) commit() {
	if f.committed {
		return
	}
	f.committed = true
	h := f.w.Header()
	if f.eventsource {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "must-revalidate")
	}
	if f.etag != "" {
		h.Set("ETag", f.etag)
	}
	f.w.WriteHeader(http.StatusOK)
	held := f.held
	f.held = nil
	f.write(held)
}

// write buffers b for the client. A normal or longpoll feed's rows go out
// in large writes (responseBuffer), a continuous one's a row at a time
// (row flushes).
func (f *feedWriter) write(b []byte) {
	if f.err != nil {
		return
	}
	if !f.committed {
		f.held = append(f.held, b...)
		return
	}
	if f.bw == nil {
		size := responseBuffer
		if f.continuous {
			size = 4 << 10
		}
		f.bw = bufio.NewWriterSize(f.w, size)
	}
	_, f.err = f.bw.Write(b)
}

func (f *feedWriter) flush() {
	if f.started {
		f.commit()
	}
	if f.bw != nil && f.err == nil {
		f.err = f.bw.Flush()
	}
	if fl, ok := f.w.(http.Flusher); ok && f.err == nil {
		fl.Flush()
	}
}

func (f *feedWriter) row(c *localdb.Change) error {
	b, err := f.encode(c)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.start()
	if !f.committed {
		// CouchDB sends what it holds when the next row would take it
		// past its buffer.
		n := len(b)
		if f.rows > 0 {
			n += len(",\n")
		}
		if f.heldRows > 0 && f.heldRows+n > chunkedResponseBuffer {
			f.commit()
		} else {
			f.heldRows += n
		}
	}
	if !f.continuous && f.rows > 0 {
		f.write([]byte(",\n"))
	}
	if f.eventsource {
		b = []byte("data: " + string(b) + "\nid: " + strconv.FormatInt(c.Seq, 10) + "\n")
	}
	f.write(b)
	if f.continuous {
		f.write([]byte("\n"))
		f.flush()
	}
	f.rows++
	f.wrote = true
	return f.err
}

// encode is a row's JSON; with attachments=true its document is read
// again with the attachment bodies inline.
func (f *feedWriter) encode(c *localdb.Change) ([]byte, error) {
	if f.inline == nil || c.Doc == nil || len(c.Doc.Attachments) == 0 {
		if c.Doc != nil {
			viewDocs(f.view, c.Doc)
		}
		// Compact already: through jsonMarshal, encoding/json would scan
		// the document's bytes again to compact them.
		b, err := c.AppendJSON(f.buf[:0])
		if err == nil && cap(b) <= 1<<20 {
			f.buf = b[:0]
		}
		return b, err
	}
	full, err := f.inline(c.Doc)
	if err != nil {
		return nil, err
	}
	defer closeBodies(full)
	viewDocs(f.view, full)
	bare := *c
	bare.Doc = nil
	b, err := jsonMarshal(&bare)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(bytes.TrimSuffix(bytes.TrimRight(b, "\n"), []byte("}")))
	buf.WriteString(`,"doc":`)
	if err := writeDocJSON(&buf, full); err != nil {
		return nil, err
	}
	buf.WriteString("}")
	return buf.Bytes(), nil
}

// heartbeat writes a newline unless a row went out since the last call.
func (f *feedWriter) heartbeat() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wrote {
		f.wrote = false
		return
	}
	if f.continuous {
		f.start()
	} else if !f.started {
		// Longpoll: newlines before the JSON keep the connection alive.
		f.started = true
		f.commit()
		f.write([]byte("\n"))
		f.flush()
		f.write([]byte("{\"results\":[\n"))
		return
	}
	f.write([]byte("\n"))
	f.flush()
}

// begin sends a continuous feed's headers at once, as CouchDB does.
func (f *feedWriter) begin() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.start()
	f.flush()
}

func (f *feedWriter) end(lastSeq int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.start()
	if f.eventsource {
		f.flush() // an event stream just ends
		return
	}
	var pending int64
	if f.pending != nil {
		pending = f.pending(lastSeq)
	}
	tail := strconv.FormatInt(lastSeq, 10) + `,"pending":` + strconv.FormatInt(pending, 10) + "}\n"
	if f.continuous {
		f.write([]byte(`{"last_seq":` + tail))
	} else {
		f.write([]byte("\n],\n\"last_seq\":" + tail))
	}
	f.flush()
}

// isCommitted reports whether the feed's status went out.
func (f *feedWriter) isCommitted() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.committed
}

var feedKinds = map[string]localdb.Feed{"normal": localdb.FeedNormal, "longpoll": localdb.FeedLongpoll, "continuous": localdb.FeedContinuous, "eventsource": localdb.FeedContinuous}

// serveChanges is GET|POST /{db}/_changes: localdb.Follow, with the
// heartbeats of a longpoll or continuous feed written alongside.
func (s *Server) serveChanges(w http.ResponseWriter, r *http.Request, db *localdb.DB) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
		s.writeError(w, r, methodNotAllowed("GET,HEAD,POST"))
		return
	}
	p, err := parseFeedParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx := r.Context()
	since := p.opts.Since
	if p.sinceNow {
		info, err := db.Info(ctx)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		since = info.UpdateSeq
	}
	// A filter function that fails ends the feed with its error, as in
	// CouchDB (a 500 when nothing was sent yet).
	var filterErr error
	if p.ddocFilter != "" || p.viewFilter != "" {
		fn, err := jsFeedFilter(r, db, p.ddocFilter, p.viewFilter, func(err error) {
			if filterErr == nil {
				filterErr = err
			}
		})
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		p.opts.Filter = fn
	}
	f := &feedWriter{w: w, continuous: p.feed == "continuous" || p.feed == "eventsource", eventsource: p.feed == "eventsource", view: s.replicatorView(r)}
	if p.attachments {
		f.inline = func(d *couchdoc.Doc) (*couchdoc.Doc, error) {
			return db.Get(ctx, d.ID, localdb.GetOptions{Rev: d.Rev, Attachments: true})
		}
	}
	if p.feed == "normal" {
		info, err := db.Info(ctx)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		f.etag = feedETag(info.UpdateSeq, r.URL.RawQuery)
	}
	f.pending = func(seq int64) int64 {
		// A count that fails leaves 0: the rows already went out.
		n, _ := db.PendingChanges(ctx, seq)
		return n
	}
	if f.continuous {
		f.begin()
	}
	stop := f.heartbeats(p.heartbeat)
	row := f.row
	if p.opts.Filter != nil {
		row = func(c *localdb.Change) error {
			if filterErr != nil {
				return filterErr
			}
			return f.row(c)
		}
	}
	last, err := db.Follow(ctx, since, localdb.FollowOptions{ChangesOptions: p.opts, Feed: feedKinds[p.feed], Timeout: p.timeout}, row)
	stop()
	if err == nil && filterErr != nil {
		err = filterErr
	}
	switch {
	case err == nil:
		f.end(last)
	case ctx.Err() != nil:
		if f.continuous {
			f.end(last) // best effort on shutdown
		}
	case errors.Is(err, localdb.ErrClosed):
		// The database was deleted (or the server is stopping) under the
		// feed: it ends as a feed does, with the position it reached; the
		// client's next request learns why.
		f.end(last)
	default:
		s.feedError(w, r, f, err)
	}
}

// heartbeats writes a newline every d while the feed has nothing to send,
// until the returned stop is called; d == 0 writes none.
func (f *feedWriter) heartbeats(d time.Duration) (stop func()) {
	if d <= 0 {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f.heartbeat()
			}
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// feedError reports an error before the answer started, or cuts the
// stream after (the client sees a truncated body, as with CouchDB).
func (s *Server) feedError(w http.ResponseWriter, r *http.Request, f *feedWriter, err error) {
	if !f.isCommitted() {
		s.writeError(w, r, err)
		return
	}
	f.mu.Lock()
	f.flush() // what was written goes out
	f.mu.Unlock()
	if !errors.Is(err, context.Canceled) && !errors.Is(err, localdb.ErrClosed) {
		// A feed ended by DELETE /{db} (or the server's stop) just ends.
		s.log.Warn("changes feed", "err", err)
	}
	// Then the connection is cut, as CouchDB cuts it: a client must not
	// take a feed that ends short for a whole one.
	panic(http.ErrAbortHandler)
}

// feedETag is a normal feed's opaque ETag: the same database state and
// query give the same one.
func feedETag(updateSeq int64, query string) string {
	return opaqueETag(strconv.FormatInt(updateSeq, 10), query)
}
