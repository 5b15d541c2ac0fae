package couch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

// acceptDocs asks open_revs for multipart answers (attachments as raw
// bytes) and takes JSON from peers without them (PouchDB).
const acceptDocs = "multipart/mixed, application/json"

// acceptBulkGet asks _bulk_get for multipart/mixed: CouchDB answers JSON
// as soon as Accept admits application/json. Peers that only do JSON
// (PouchDB) answer JSON anyway, and both are read.
const acceptBulkGet = "multipart/mixed"

// acceptFor is the Accept of a documents request: multipart when
// attachment bodies are wanted, else JSON only, since CouchDB puts every
// attachment body in a multipart answer whatever attachments= says.
func acceptFor(atts bool, multipart string) string {
	if atts {
		return multipart
	}
	return "application/json"
}

// OpenRevs fetches revisions of one document: GET
// /{db}/{id}?revs=true&latest=true&open_revs=[...]&attachments=true&atts_since=[...]
// with Accept: multipart/mixed. It reads CouchDB's multipart answers
// (attachment bodies streamed and checked against their digests) and
// PouchDB's JSON answers (attachments inline). fn gets each revision, or a
// nil document and a *wire.RevError (matching couchdoc.ErrNotFound) for a
// missing one. Attachment bodies are only valid inside fn.
func (db *DB) OpenRevs(ctx context.Context, id string, revs []string, attsSince []string, fn func(doc *couchdoc.Doc, revErr error) error) error {
	return db.openRevs(ctx, id, revs, attsSince, true, fn)
}

func (db *DB) openRevs(ctx context.Context, id string, revs []string, attsSince []string, atts bool, fn func(doc *couchdoc.Doc, revErr error) error) error {
	if len(revs) == 0 {
		return nil
	}
	q := url.Values{}
	q.Set("revs", "true")
	q.Set("latest", "true")
	q.Set("attachments", strconv.FormatBool(atts))
	// Marks gzip-stored attachments, whose digest CouchDB states over the
	// encoded bytes (see wire.VerifyInline).
	q.Set("att_encoding_info", "true")
	openRevs, _ := json.Marshal(revs)
	q.Set("open_revs", string(openRevs))
	if len(attsSince) > 0 {
		as, _ := json.Marshal(attsSince)
		q.Set("atts_since", string(as))
	}
	r := &request{method: http.MethodGet, path: "/" + wire.EscapeDocID(id), query: q, accept: acceptFor(atts, acceptDocs)}
	return db.readDocs(ctx, r, fn)
}

// BulkGet fetches many revisions in one POST
// /{db}/_bulk_get?revs=true&latest=true&attachments=true, each with its
// atts_since, asking for multipart/mixed and reading JSON too. fn has the
// contract of OpenRevs; per-revision errors ({"error": {...}} entries) go
// to it as *wire.RevError.
//
// A peer without _bulk_get answers 404, 405, 400 or 501: BulkGet returns
// that *HTTPError, wrapped so that it matches sync.ErrNoBulkGet, before
// calling fn, and the caller falls back to OpenRevs. Only the answer's
// HTTP status decides: a garbled or cut answer is not such an error.
func (db *DB) BulkGet(ctx context.Context, reqs []sync.BulkGetRequest, fn func(doc *couchdoc.Doc, revErr error) error) error {
	return db.bulkGet(ctx, reqs, true, fn)
}

func (db *DB) bulkGet(ctx context.Context, reqs []sync.BulkGetRequest, atts bool, fn func(doc *couchdoc.Doc, revErr error) error) error {
	if len(reqs) == 0 {
		return nil
	}
	body := wire.BulkGetRequest{Docs: make([]wire.BulkGetRef, len(reqs))}
	for i, rq := range reqs {
		body.Docs[i] = wire.BulkGetRef{ID: rq.ID, Rev: rq.Rev, AttsSince: rq.AttsSince}
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	q := url.Values{}
	q.Set("revs", "true")
	q.Set("latest", "true")
	q.Set("attachments", strconv.FormatBool(atts))
	q.Set("att_encoding_info", "true")
	r := &request{method: http.MethodPost, path: "/_bulk_get", query: q, body: b, contentType: "application/json", accept: acceptFor(atts, acceptBulkGet)}
	err = db.readDocs(ctx, r, fn)
	var he *HTTPError
	if errors.As(err, &he) {
		switch he.Err.Status {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
			return fmt.Errorf("%w: %w", sync.ErrNoBulkGet, err)
		}
	}
	return err
}

// readDocs sends r and streams its document answer to fn.
func (db *DB) readDocs(ctx context.Context, r *request, fn wire.DocFunc) error {
	resp, err := db.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var fnErr error
	wrapped := func(doc *couchdoc.Doc, revErr error) error {
		fnErr = fn(doc, revErr)
		return fnErr
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = "application/json"
	}
	if r.path == "/_bulk_get" && !isMultipart(ct) {
		err = wire.ReadBulkGet(resp.Body, wrapped)
	} else {
		err = wire.ReadDocs(resp.Body, ct, wrapped)
	}
	switch {
	case err == nil:
		drainClose(resp.Body)
		return nil
	case fnErr != nil && err == fnErr:
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	}
	var me *wire.MalformedError
	if errors.As(err, &me) || errors.Is(err, couchdoc.ErrDigestMismatch) {
		return db.malformed(r, err)
	}
	return err
}

func isMultipart(ct string) bool {
	return len(ct) >= 10 && ct[:10] == "multipart/"
}

// PutDoc writes one document with new_edits=false: PUT
// /{db}/{id}?new_edits=false. A document with attachment bytes goes as
// multipart/related. Streamed Bodies go through a pipe and are never held in
// memory; such a request is sent once, not retried here (its failures are
// *UnreachableError or 5xx *HTTPError, which IsRetryable reports, so the
// replicator retries the document). Documents with stubs or inline Data
// only are sent from memory and retried like any request. A Body that does
// not match its Length or Digest fails with couchdoc.ErrDigestMismatch.
func (db *DB) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	if doc.ID == "" {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "PutDoc: document without _id")
	}
	q := url.Values{}
	q.Set("new_edits", "false")
	r := &request{method: http.MethodPut, path: "/" + wire.EscapeDocID(doc.ID), query: q}
	if !wire.HasFollows(doc) {
		body, err := doc.MarshalJSON()
		if err != nil {
			return err
		}
		r.body, r.contentType = body, "application/json"
		_, _, err = db.call(ctx, r)
		return err
	}
	rel, err := wire.NewRelated(doc)
	if err != nil {
		return err
	}
	if !hasBodies(doc) {
		// bytes already in memory: send a replayable body, retried as usual
		var buf bytes.Buffer
		buf.Grow(int(rel.Len()))
		if _, err := rel.WriteTo(&buf); err != nil {
			return err
		}
		r.body, r.contentType = buf.Bytes(), rel.ContentType()
		_, _, err = db.call(ctx, r)
		return err
	}
	pr, pw := io.Pipe()
	writeErr := make(chan error, 1)
	go func() {
		_, err := rel.WriteTo(pw)
		pw.CloseWithError(err)
		writeErr <- err
	}()
	r.stream, r.streamLen, r.contentType = pr, rel.Len(), rel.ContentType()
	resp, err := db.do(ctx, r)
	pr.CloseWithError(errRequestDone) // unblocks the writer if the request ended early
	werr := <-writeErr
	if resp != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
	}
	if werr != nil && !errors.Is(werr, errRequestDone) && !errors.Is(werr, io.ErrClosedPipe) {
		// The body failed on our side (a local read error, a digest
		// mismatch): that, not the cut request, is the cause.
		return fmt.Errorf("%s: PUT %s: write body: %w", db.name, db.pathOf(r), werr)
	}
	return err
}

var errRequestDone = errors.New("couch: request finished")

// hasBodies reports whether doc has an attachment streamed from a Body.
func hasBodies(doc *couchdoc.Doc) bool {
	for _, a := range doc.Attachments {
		if !a.Stub && a.Body != nil {
			return true
		}
	}
	return false
}

// InlineMax is the DB's sync.InlineAttachmentMax: documents whose
// attachment bodies total at most this many bytes are read into memory and
// written in _bulk_docs (base64) rather than alone in a multipart PUT. A
// CouchDB cluster answers a multipart PUT only once every copy of the
// document's shard read the attachments: while a node is down it writes
// the document but keeps the request open until [couchdb]
// attachment_writer_timeout (5 min), where _bulk_docs answers at once.
const InlineMax = 64 << 10

// InlineAttachmentMax makes the DB a sync.InlineWriter (see InlineMax).
func (db *DB) InlineAttachmentMax() int64 { return InlineMax }

var _ sync.InlineWriter = (*DB)(nil)
