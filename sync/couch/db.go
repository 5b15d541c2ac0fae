package couch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

// maxJSONAnswer bounds the small JSON answers read whole (info, _local
// docs, _revs_diff, _bulk_docs results).
const maxJSONAnswer = 256 << 20

// call sends a replayable request and reads its whole (small) JSON
// answer; an answer cut short is a failed attempt like any other.
func (db *DB) call(ctx context.Context, r *request) (status int, body []byte, err error) {
	err = db.attempts(ctx, r, func(attempt int) error {
		resp, err := db.once(ctx, r, attempt)
		if err != nil {
			return err
		}
		body, err = io.ReadAll(io.LimitReader(resp.Body, maxJSONAnswer))
		resp.Body.Close()
		status = resp.StatusCode
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	return status, body, nil
}

// callJSON is call decoding the answer into out.
func (db *DB) callJSON(ctx context.Context, r *request, out any) error {
	_, body, err := db.call(ctx, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return db.malformed(r, foreign(te))
		}
		return db.malformed(r, err)
	}
	return nil
}

// foreign words a whole JSON answer of another shape than CouchDB's,
// without the Go type names json's error holds.
func foreign(te *json.UnmarshalTypeError) error {
	where := "the answer"
	if te.Field != "" {
		where = fmt.Sprintf("%q", te.Field)
	}
	want := "another kind of value"
	switch te.Type.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Float64:
		want = "a number"
	}
	return &wire.MalformedError{What: "answer", Foreign: true,
		Err: fmt.Errorf("%s is a JSON %s where CouchDB sends %s: not a CouchDB database?", where, te.Value, want)}
}

// malformed wraps an answer that does not parse.
func (db *DB) malformed(r *request, err error) error {
	var me *wire.MalformedError
	if !errors.As(err, &me) {
		err = &wire.MalformedError{What: "answer", Err: err}
	}
	return &AnswerError{Peer: db.name, Method: r.method, Path: db.pathOf(r), Err: err}
}

// Info returns the database's info (GET /{db}). A missing database is
// couchdoc.ErrNotFound, bad credentials couchdoc.ErrUnauthorized or
// couchdoc.ErrForbidden, each in an *HTTPError naming the peer.
func (db *DB) Info(ctx context.Context) (*sync.PeerInfo, error) {
	var info sync.PeerInfo
	r := &request{method: http.MethodGet}
	if err := db.callJSON(ctx, r, &info); err != nil {
		return nil, err
	}
	if len(info.UpdateSeq) == 0 {
		return nil, db.malformed(r, &wire.MalformedError{What: "answer", Foreign: true,
			Err: errors.New("no update_seq: not a CouchDB database (a server's root, or another kind of server?)")})
	}
	return &info, nil
}

// Create creates the database (PUT /{db}): couchdoc.ErrFileExists (412) if
// it exists.
func (db *DB) Create(ctx context.Context) error {
	_, _, err := db.call(ctx, &request{method: http.MethodPut})
	return err
}

// GetLocal returns the _local document id (without the "_local/" prefix)
// as JSON, or couchdoc.ErrNotFound.
func (db *DB) GetLocal(ctx context.Context, id string) (json.RawMessage, error) {
	return db.GetDoc(ctx, couchdoc.LocalPrefix+id)
}

// GetDoc returns the winning revision of the document id as JSON, or
// couchdoc.ErrNotFound (a replicator reads a design document's filter
// with it).
func (db *DB) GetDoc(ctx context.Context, id string) (json.RawMessage, error) {
	r := &request{method: http.MethodGet, path: "/" + wire.EscapeDocID(id)}
	_, body, err := db.call(ctx, r)
	if err != nil {
		return nil, err
	}
	if !json.Valid(body) {
		return nil, db.malformed(r, errors.New("invalid JSON"))
	}
	return body, nil
}

// PutLocal writes the _local document id (without the prefix); body holds
// the _rev it replaces, if any. It returns the new rev; a stale _rev is
// couchdoc.ErrConflict.
func (db *DB) PutLocal(ctx context.Context, id string, body json.RawMessage) (string, error) {
	var res couchdoc.DocResult
	r := &request{method: http.MethodPut, path: "/" + wire.EscapeDocID(couchdoc.LocalPrefix+id), body: body, contentType: "application/json"}
	if err := db.callJSON(ctx, r, &res); err != nil {
		return "", err
	}
	if res.Rev == "" {
		return "", db.malformed(r, errors.New("no rev in the answer"))
	}
	return res.Rev, nil
}

// RevsDiff returns, per document id, the revisions the database lacks
// (POST /{db}/_revs_diff). Ids with nothing missing are absent.
func (db *DB) RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error) {
	if len(revs) == 0 {
		return map[string]couchdoc.RevsDiffResult{}, nil
	}
	body, err := json.Marshal(revs)
	if err != nil {
		return nil, err
	}
	r := &request{method: http.MethodPost, path: "/_revs_diff", body: body, contentType: "application/json"}
	_, ans, err := db.call(ctx, r)
	if err != nil {
		return nil, err
	}
	m, err := wire.ParseRevsDiff(ans)
	if err != nil {
		return nil, db.malformed(r, err)
	}
	for id, res := range m {
		if len(res.Missing) == 0 {
			delete(m, id)
		}
	}
	return m, nil
}

// BulkDocs writes docs with new_edits=false in one POST /{db}/_bulk_docs
// (attachments inline or stubs) and returns the per-document failures. The
// request is idempotent, so it is retried like a read.
func (db *DB) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	for _, d := range docs {
		for name, a := range d.Attachments {
			if !a.Stub && a.Body != nil && a.Data == nil {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "BulkDocs: attachment %q of %q is streamed; use PutDoc", name, d.ID)
			}
		}
	}
	body, err := wire.AppendBulkDocs(make([]byte, 0, 1024*len(docs)), docs, false)
	if err != nil {
		return nil, err
	}
	r := &request{method: http.MethodPost, path: "/_bulk_docs", body: body, contentType: "application/json"}
	_, ans, err := db.call(ctx, r)
	if err != nil {
		return nil, err
	}
	failed, err := wire.ReadBulkDocsResult(bytes.NewReader(ans))
	if err != nil {
		return nil, db.malformed(r, err)
	}
	return failed, nil
}

// EnsureFullCommit asks the database to make its writes durable (POST
// /{db}/_ensure_full_commit).
func (db *DB) EnsureFullCommit(ctx context.Context) error {
	_, _, err := db.call(ctx, &request{method: http.MethodPost, path: "/_ensure_full_commit", body: []byte("{}"), contentType: "application/json"})
	return err
}
