package couchcorpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/settee/settee/internal/wire"
	"io"
	"net/http"
	"strings"
	gosync "sync"
	"time"
)

// Replayer sends recorded requests to another server and compares its
// answers with CouchDB's.
type Replayer struct {
	// Base is the server's root URL, without credentials.
	Base string
	// Client sends the requests; nil uses a client without a timeout
	// (each request is bounded by the recording's own duration).
	Client *http.Client
	// Auth sets credentials on requests that CouchDB received with
	// (masked) credentials.
	Auth func(*http.Request)
	// Mapper maps revisions and sequences; nil makes a new one.
	Mapper *Mapper
	// Options are the deliberate normalizations.
	Options Options
	// Unmask, when set, puts real credentials back into a request body
	// whose passwords the corpus masked ("<masked>"), such as a POST
	// /_session login.
	Unmask func(e *Exchange, body []byte) []byte

	mu     gosync.Mutex
	cookie *http.Cookie // the AuthSession our server gave the last login
}

// Result is one replayed exchange.
type Result struct {
	Exchange *Exchange
	Got      *Response
	Err      error    // the request could not be sent or read
	Diffs    []string // how the answer differs from CouchDB's
}

func (r *Replayer) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Do replays one exchange. A feed that CouchDB's client closed early is
// read for as long as it was recorded, then closed the same way.
func (r *Replayer) Do(ctx context.Context, e *Exchange) *Response {
	res := r.do(ctx, e)
	if res.Err != nil {
		return &Response{Status: -1, Header: http.Header{}, Body: []byte(res.Err.Error())}
	}
	return res.Got
}

func (r *Replayer) do(ctx context.Context, e *Exchange) Result {
	if r.Mapper == nil {
		r.Mapper = NewMapper()
	}
	res := Result{Exchange: e}
	req, err := r.Mapper.Request(r.Base, e, r.Auth)
	if err != nil {
		res.Err = err
		return res
	}
	if r.Unmask != nil && strings.Contains(e.ReqBody, "<masked>") {
		body := r.Unmask(e, e.RequestBody())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	if strings.Contains(e.ReqHeader("Cookie"), "AuthSession") {
		// CouchDB's replicator logs in once, then sends only the cookie:
		// send the one our server gave instead of the masked one.
		r.mu.Lock()
		if c := r.cookie; c != nil {
			req.Header.Del("Authorization")
			req.AddCookie(c)
		}
		r.mu.Unlock()
	}
	// Bound every request: a recorded feed by its own duration (plus a
	// margin for a slower machine when it ended by itself), anything else
	// by a generous fixed limit (a first view build under -race on a
	// loaded machine takes tens of seconds).
	limit := 120 * time.Second
	if e.IsFeed() {
		limit = time.Duration(e.DurationMS)*time.Millisecond + 5*time.Second
		if e.Aborted || e.Incomplete {
			limit = time.Duration(e.DurationMS) * time.Millisecond
		}
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	resp, err := r.client().Do(req.WithContext(ctx))
	if err != nil {
		res.Err = fmt.Errorf("%s %s: %w", e.Method, e.Path, err)
		return res
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil && !((e.Aborted || e.Incomplete) && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		res.Err = fmt.Errorf("%s %s: read answer: %w", e.Method, e.Path, err)
		return res
	}
	for _, c := range resp.Cookies() {
		if c.Name == "AuthSession" && c.Value != "" {
			r.mu.Lock()
			r.cookie = c
			r.mu.Unlock()
		}
	}
	res.Got = &Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Request: req.Method + " " + req.URL.String()}
	r.Mapper.LearnFrom(e, res.Got)
	res.Diffs = Compare(e, res.Got, r.Mapper, r.Options)
	return res
}

// Run replays exchanges in order and calls fn with each result, in seq
// order. A feed that was still open when CouchDB received the next request
// is sent concurrently, and the next requests follow at their recorded
// offsets, so that the writes a feed waited for reach it while it is open.
func (r *Replayer) Run(ctx context.Context, exchanges []Exchange, fn func(Result)) {
	if r.Mapper == nil {
		r.Mapper = NewMapper()
	}
	results := make([]chan Result, len(exchanges))
	var wg gosync.WaitGroup
	var anchor time.Time // when the open feed was sent
	var anchorMS float64
	open := 0 // feeds still open
	var openMu gosync.Mutex
	for i := range exchanges {
		e := &exchanges[i]
		results[i] = make(chan Result, 1)
		openMu.Lock()
		waiting := open > 0
		openMu.Unlock()
		if waiting {
			// Keep the recorded spacing after the open feed.
			if d := time.Until(anchor.Add(time.Duration(e.StartMS-anchorMS) * time.Millisecond)); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
		}
		overlaps := i+1 < len(exchanges) && e.IsFeed() && e.StartMS+e.DurationMS > exchanges[i+1].StartMS
		if !overlaps {
			results[i] <- r.do(ctx, e)
			continue
		}
		openMu.Lock()
		if open == 0 {
			anchor, anchorMS = time.Now(), e.StartMS
		}
		open++
		openMu.Unlock()
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] <- r.do(ctx, e)
			openMu.Lock()
			open--
			openMu.Unlock()
		}(i)
	}
	for i := range results {
		fn(<-results[i])
	}
	wg.Wait()
}

// LoadDataset loads a dataset file into db on the server at base, as the
// corpus README says every recorded database was loaded: PUT /{db} (an
// existing one is kept), then one request per line, _local docs with PUT
// (minus _rev), leaf revisions with _bulk_docs new_edits=false.
func LoadDataset(ctx context.Context, client *http.Client, base, db, file string, auth func(*http.Request)) error {
	lines, err := DatasetLines(file)
	if err != nil {
		return err
	}
	send := func(method, path string, body []byte) error {
		req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if auth != nil {
			auth(req)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 && !(method == http.MethodPut && path == "/"+db && resp.StatusCode == http.StatusPreconditionFailed) {
			return fmt.Errorf("load %s: %s %s: %d %s", file, method, path, resp.StatusCode, b)
		}
		return nil
	}
	if err := send(http.MethodPut, "/"+db, nil); err != nil {
		return err
	}
	for _, line := range lines {
		var head struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return fmt.Errorf("load %s: %w", file, err)
		}
		if rest, ok := strings.CutPrefix(head.ID, "_local/"); ok {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				return err
			}
			delete(m, "_rev")
			b, _ := json.Marshal(m)
			if err := send(http.MethodPut, "/"+db+"/_local/"+wire.EscapeSegment(rest), b); err != nil {
				return err
			}
			continue
		}
		body := append(append([]byte(`{"new_edits":false,"docs":[`), line...), "]}"...)
		if err := send(http.MethodPost, "/"+db+"/_bulk_docs", body); err != nil {
			return err
		}
	}
	return nil
}
